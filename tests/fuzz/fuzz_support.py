"""What the fuzz tests share: their budget, and the strategies of hostile text and JSON.

The budget is small by default, so that the fuzz tests take seconds in every run of the suite;
``TARRY_TEST_FUZZ=deep`` multiplies every test's examples by 50 for a longer local hunt (see
tests/README.md). Inputs that once broke a parser are kept as explicit ``@example`` cases, so
every run replays them whatever the budget.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

__all__ = ["HOSTILE_YAML", "fuzz", "hostile_json", "json_text", "outcome", "yaml_documents"]

T = TypeVar("T")
_FACTOR = {"ci": 1, "deep": 50}
MODE = os.environ.get("TARRY_TEST_FUZZ", "ci")
if MODE not in _FACTOR:
    raise RuntimeError(f"TARRY_TEST_FUZZ must be one of {', '.join(_FACTOR)}, not {MODE!r}")


def fuzz(examples: int) -> settings:
    """The settings of one fuzz test: ``examples`` inputs per run (times 50 when deep), no
    per-example deadline (a loaded machine is not a hang; pytest's timeout catches one)."""
    return settings(max_examples=examples * _FACTOR[MODE], deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


def outcome(call: Callable[[], T]) -> T | Exception:
    """What ``call()`` returned, or the exception it raised (for a test to judge)."""
    try:
        return call()
    except Exception as exc:  # any exception at all: the test says which ones are allowed
        return exc


# -- JSON ----------------------------------------------------------------------------------------

_ANY_TEXT = st.text(st.characters(codec=None, categories=None), max_size=20)
"""Any code points, lone surrogates and NUL included."""

_SCALARS = (st.none() | st.booleans() | st.integers()
            | st.integers(min_value=10**300, max_value=10**4100)
            | st.floats(allow_nan=True, allow_infinity=True) | _ANY_TEXT)


def hostile_json(max_leaves: int = 30) -> st.SearchStrategy[Any]:
    """JSON-shaped Python data with every value a store may refuse: NaN, infinities, NUL
    characters, lone surrogates, integers of thousands of digits, keys of any text."""
    return st.recursive(
        _SCALARS,
        lambda children: st.lists(children, max_size=6)
        | st.dictionaries(_ANY_TEXT, children, max_size=6),
        max_leaves=max_leaves)


_JSON_PIECES = ["{", "}", "[", "]", ",", ":", '"k"', '"\\u0000"', '"\\ud800"', "NaN",
                "Infinity", "-Infinity", "1e400", "9" * 5000, "0", "-1.5", "true", "null",
                " ", '"', "\\", "[" * 100, "]" * 100]


def json_text() -> st.SearchStrategy[str]:
    """Text that is often JSON and often almost JSON."""
    valid = hostile_json().map(lambda value: json.dumps(value, allow_nan=True))
    pieces = st.lists(st.sampled_from(_JSON_PIECES), max_size=30).map("".join)
    return valid | pieces | st.text(max_size=80)


# -- YAML ----------------------------------------------------------------------------------------

_KEYS = ["flow", "steps", "description", "timezone", "inputs", "hold", "recover", "on",
         "wait", "for", "until", "wait_for", "timeout", "match", "accept", "remind", "every",
         "max", "set", "log", "message", "fail", "exit", "emit", "type", "data", "id",
         "repeat", "backoff", "initial", "max_delay", "rate", "jitter", "for_each", "as",
         "concurrency", "tolerate", "if", "optional", "retry", "after", "check", "required",
         "default", "any", "event", "schedule", "catch_up", "target", "ask", "title",
         "outcomes", "form", "events", "correlate_on", "schema", "buffer", "secret_env",
         "scenario", "stub", "expect", "status", "bindings", "horizon", "start", "a", "b"]
_VALUES = ["2d", "30s", "P99999999999W", "9" * 400 + "s", "1h30m", "PT0.5S", "0", "-1", "3",
           "2026-09-01T09:00:00Z", "2026-02-31T09:00:00Z", "2026-09-01T09:00:00",
           "{{ x }}", "{{ 1d * 10000000 }}", "{{ [1] * 3 }}", "{{ now() | plus(1d) }}",
           "{{ ", "}}", "e", "approved", "Europe/Berlin", "Mars/Olympus", "0 9 * * mon-fri",
           "true", "null", "1e400", ".inf", ".nan", "9" * 4500, "x" * 300]
_SPLICES = ["&a ", "*a", "&b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]", "!!int ", "!!binary ",
            "!custom ", "<<: ", "? ", "- ", ": ", "\n", "\n  ", "\n    - ", "[" * 80,
            "{" * 80, "'", '"', "#", "|\n  ", ">", "%YAML 1.2\n", "---\n", "\t", "\x00"]


def _mapping(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.dictionaries(st.sampled_from(_KEYS), children, max_size=5)


_TREES = st.recursive(st.sampled_from(_VALUES) | st.integers() | st.booleans() | st.none(),
                      lambda children: st.lists(children, max_size=4) | _mapping(children),
                      max_leaves=25)


@st.composite
def yaml_documents(draw: st.DrawFn) -> str:
    """A YAML text: a tree of tarry's keys and values (as JSON, which is YAML) with pieces of
    YAML syntax spliced in at random places, or plain random text."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(max_size=200))
    text = json.dumps(draw(_mapping(_TREES)), allow_nan=True)
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(_SPLICES)) + text[at:]
    return text


def laughs(levels: int) -> str:
    """The "billion laughs": each anchored list holds nine aliases of the one before."""
    lists = ["&l0 [x, x, x, x, x, x, x, x, x]"]
    lists += [f"&l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, levels)]
    return "[" + ", ".join(lists) + "]"


HOSTILE_YAML = {
    "billion laughs": "flow: f\nsteps:\n  - a: { set: { v: " + laughs(9) + " } }\n",
    "deep nesting": "flow: f\nsteps: " + "[" * 3000 + "]" * 3000 + "\n",
    "deep block nesting": "flow: f\nsteps:\n" + "".join(
        "  " * depth + "- a:\n" + "  " * depth + "    steps:\n" for depth in range(100)),
    "huge ISO duration": "flow: f\nsteps:\n  - a: { wait: { for: P99999999999W } }\n",
    "400-digit duration": "flow: f\nsteps:\n  - a: { wait: { for: " + "9" * 400 + "s } }\n",
    "4,300-digit literal": "flow: f\nsteps:\n  - a: { set: { v: " + "9" * 4300 + " } }\n",
    "infinite float": "flow: f\nsteps:\n  - a: { set: { v: 1e400 } }\n",
    "manifest buffer": "events:\n  e: { correlate_on: [k], buffer: P99999999999W }\n",
    "scenario horizon": "scenario: s\nflow: f.yaml\nhorizon: P99999999999W\nexpect: {}\n",
}
"""Files that once raised RecursionError, OverflowError or ValueError, or ran for a minute."""

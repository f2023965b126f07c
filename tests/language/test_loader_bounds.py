"""Hostile files: every loader (flows, event manifests, scenarios) refuses what would exhaust
its stack, its memory or Python's number conversions with its own ``file:line:col`` error.

Each case names the loader, the bad text and the exact problem; the same text would have
raised ``RecursionError``, ``OverflowError`` or ``ValueError`` (or run for a minute while
expanding aliases) before these bounds.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tarry.errors import LoadError
from tarry.language.loader import parse_flow
from tarry.language.manifests import parse_manifests
from tarry.language.yamlsource import MAX_ALIAS_NODES, MAX_DEPTH
from tarry.scenarios import parse_scenario

Loader = Callable[[str, str], object]

FLOW_VALUE = "flow: f\nsteps:\n  - a:\n      set: {{ v: {} }}\n"
"""A flow whose one step binds the value written in place of ``{}`` (line 4, column 17)."""
MANIFEST_VALUE = "events:\n  e:\n    correlate_on: [a]\n    schema: {}\n"
"""A manifest whose schema is the value written in place of ``{}`` (line 4, column 13)."""
SCENARIO_VALUE = "scenario: s\nflow: f.yaml\ninputs: {{ v: {} }}\nexpect: {{ status: x }}\n"
"""A scenario whose input ``v`` is the value written in place of ``{}`` (line 3, column 14)."""

LOADERS: dict[str, tuple[Loader, str]] = {
    "flow": (parse_flow, FLOW_VALUE),
    "manifest": (parse_manifests, MANIFEST_VALUE),
    "scenario": (parse_scenario, SCENARIO_VALUE),
}


def problems(kind: str, value: str) -> list[str]:
    """The problems of loading ``value`` placed in a file of ``kind``."""
    load, template = LOADERS[kind]
    text = template.replace("{}", value) if kind == "manifest" else template.format(value)
    with pytest.raises(LoadError) as caught:
        load(text, "x.yaml")
    return str(caught.value).splitlines()


def nested(depth: int) -> str:
    """``depth`` lists one inside the other, in flow style."""
    return "[" * depth + "]" * depth


def laughs(levels: int) -> str:
    """The "billion laughs": each anchored list holds nine aliases of the one before."""
    lists = ["&l0 [x, x, x, x, x, x, x, x, x]"]
    lists += [f"&l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, levels)]
    return "[" + ", ".join(lists) + "]"


COLUMN = {"flow": 17, "manifest": 13, "scenario": 14}
LINE = {"flow": 4, "manifest": 4, "scenario": 3}
OUTER = {"flow": 5, "manifest": 3, "scenario": 2}
"""How many mappings and lists of the file enclose the value."""


@pytest.mark.parametrize("kind", LOADERS)
def test_aliases_expanding_beyond_the_bound_are_refused_at_the_alias(kind: str) -> None:
    found = problems(kind, laughs(9))
    assert len(found) == 1
    assert found[0].startswith(f"x.yaml:{LINE[kind]}:")
    assert found[0].endswith(": the YAML aliases expand to more than 10,000 nodes; write the "
                             "values out or share less through aliases")


def test_the_alias_bound_is_reached_exactly_at_the_first_alias_beyond_it() -> None:
    text = "a: &big [" + ", ".join(["x"] * (MAX_ALIAS_NODES - 1)) + "]\nb: *big\nc: *big\n"
    with pytest.raises(LoadError) as caught:
        parse_manifests(text, "x.yaml")
    assert str(caught.value) == ("x.yaml:3:4: the YAML aliases expand to more than 10,000 "
                                 "nodes; write the values out or share less through aliases")


def test_aliases_within_the_bound_still_share_their_value() -> None:
    flow = parse_flow("flow: f\nsteps:\n  - a: { set: { v: &v [1, 2], w: *v } }\n", "x.yaml")
    assert flow.body.steps[0].construct.args == {"v": [1, 2], "w": [1, 2]}  # type: ignore[union-attr]


@pytest.mark.parametrize("kind", LOADERS)
def test_nesting_deeper_than_the_bound_is_refused_where_it_goes_too_deep(kind: str) -> None:
    column = COLUMN[kind] + MAX_DEPTH - OUTER[kind]  # at the first list beyond the bound
    assert problems(kind, nested(2000)) == [
        f"x.yaml:{LINE[kind]}:{column}: the YAML nests deeper than 64 levels of mappings and "
        "lists"]


def test_nesting_up_to_the_bound_loads() -> None:
    depth = MAX_DEPTH - OUTER["flow"]  # the flow's own mappings and lists count too
    flow = parse_flow(FLOW_VALUE.format(nested(depth)), "x.yaml")
    value = flow.body.steps[0].construct.args["v"]  # type: ignore[union-attr]
    for _ in range(depth - 1):
        value = value[0]
    assert value == []


@pytest.mark.parametrize("kind", LOADERS)
@pytest.mark.parametrize(("number", "problem"), [
    ("9" * 4300, "the number '9999999999999999999999999999999999999...' is longer than 4000 "
                 "digits"),
    ("9" * 5000 + ".5", "the number '9999999999999999999999999999999999999...' is longer "
                        "than 4000 digits"),
    ("1e400", "the number '1e400' is not finite; JSON holds no infinity or NaN"),
    (".inf", "the number '.inf' is not finite; JSON holds no infinity or NaN"),
    (".nan", "the number '.nan' is not finite; JSON holds no infinity or NaN"),
])
def test_numbers_json_cannot_hold_are_refused(kind: str, number: str, problem: str) -> None:
    found = problems(kind, f"[{number}]")
    assert f"x.yaml:{LINE[kind]}:{COLUMN[kind] + 1}: {problem}" in found


TOO_LONG = "is longer than 100 years (36525d), the longest tarry accepts"


@pytest.mark.parametrize(("load", "text", "where"), [
    (parse_flow, "flow: f\nsteps:\n  - a:\n      wait: {{ for: {} }}\n", "4:20"),
    (parse_flow, "flow: f\nsteps:\n  - a:\n      wait_for: e\n      timeout: {}\n", "5:16"),
    (parse_manifests, "events:\n  e:\n    correlate_on: [a]\n    buffer: {}\n", "4:13"),
    (parse_scenario, "scenario: s\nflow: f.yaml\nhorizon: {}\nexpect: {{ status: x }}\n",
     "3:10"),
], ids=["flow wait", "flow timeout", "manifest buffer", "scenario horizon"])
@pytest.mark.parametrize(("duration", "shown"), [
    ("P99999999999W", "P99999999999W"),
    ("9" * 400 + "s", "9999999999999999999999999999999999999..."),
    ("PT" + "9" * 400 + "S", "PT99999999999999999999999999999999999..."),
    ("5217w7d", "5217w7d"),
], ids=["iso weeks", "400 digits", "iso 400 digits", "a day too long"])
def test_durations_longer_than_100_years_are_refused(
        load: Loader, text: str, where: str, duration: str, shown: str) -> None:
    with pytest.raises(LoadError) as caught:
        load(text.format(duration), "x.yaml")
    assert f"x.yaml:{where}: duration '{shown}' {TOO_LONG}" in str(caught.value).splitlines()


def test_a_duration_of_exactly_100_years_loads() -> None:
    flow = parse_flow("flow: f\nsteps:\n  - a:\n      wait: { for: 5217w6d }\n", "x.yaml")
    assert flow.body.steps[0].construct.for_.days == 36_525  # type: ignore[union-attr]

"""Hostile action results: a value no store can keep fails its step with ``error.type =
value`` and a clear reason, once, on both stores; the good runs beside it finish."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext
from tarry.engine.values import to_json
from tarry.errors import InvalidValue
from tarry.model import RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

FLOW = """
flow: hostile
steps:
  - call:
      answer: {}
      retry: { max: 2, every: 1s }
"""
GOOD = """
flow: good
steps:
  - greet:
      set: { ok: true }
"""


def _looped() -> dict[str, Any]:
    value: dict[str, Any] = {"a": 1}
    value["self"] = value
    return value


RESULTS = {
    "tuple key": ({(1, 2): "x"}, "the result of step 'call': the key (1, 2) is not a string "
                                 "(JSON object keys are strings)"),
    "self-reference": (_looped(), "the result of step 'call': it contains itself (a list or "
                                  "object that holds a reference to itself has no JSON form)"),
    "long tuple key": ({tuple(range(5_000)): 1}, "the result of step 'call': the key (0, 1, "
                                                 "2, 3, 4, 5, 6, 7, 8, 9, 10, 11... is not a "
                                                 "string (JSON object keys are strings)"),
}


@pytest.fixture
def calls() -> list[str]:
    return []


@pytest.fixture(params=sorted(RESULTS))
def hostile(request: pytest.FixtureRequest) -> tuple[Any, str]:
    return RESULTS[request.param]


@pytest.fixture
def harness(tmp_path: Path, store_url: str, hostile: tuple[Any, str],
            calls: list[str]) -> Iterator[Harness]:
    def answer(_args: dict[str, Any], ctx: ActionContext) -> Any:
        calls.append(ctx.run_id)
        return hostile[0]

    with Harness(tmp_path, start=START, actions={"answer": answer},
                 store_url=store_url) as h:
        yield h


async def test_an_unstorable_result_fails_its_step_once_as_value(
        harness: Harness, hostile: tuple[Any, str], calls: list[str]) -> None:
    good = [harness.start(harness.flow(GOOD, "good.yaml")) for _ in range(20)]
    bad = harness.start(harness.flow(FLOW))
    await harness.run_until_idle()
    assert harness.record(bad).error == {"type": "value", "step": "call",
                                         "message": hostile[1]}
    assert calls == [bad]  # never retried: the same value would fail again
    assert {harness.record(run).status for run in good} == {RunStatus.SUCCEEDED}


def test_integer_keys_are_written_as_json_writes_them() -> None:
    assert to_json({1: [(2, 3)]}) == {"1": [[2, 3]]}


def test_a_list_that_holds_itself_is_refused_by_name() -> None:
    value: list[Any] = [1]
    value.append([value])
    with pytest.raises(InvalidValue) as caught:
        to_json(value, "the input")
    assert str(caught.value) == ("the input: it contains itself (a list or object that holds "
                                 "a reference to itself has no JSON form)")


def test_a_value_seen_twice_but_not_inside_itself_is_fine() -> None:
    shared = {"k": [1]}
    assert to_json({"a": shared, "b": [shared, shared]}) == {
        "a": {"k": [1]}, "b": [{"k": [1]}, {"k": [1]}]}


async def test_an_error_quotes_an_excerpt_of_a_huge_computed_duration(
        tmp_path: Path, store_url: str) -> None:
    with Harness(tmp_path, start=START, store_url=store_url) as harness:
        run_id = harness.start(harness.flow("""
flow: napping
inputs:
  d: { type: string, required: true }
steps:
  - nap:
      wait: { for: "{{ d }}" }
"""), {"d": "x" * 100_000})
        await harness.run_until_idle()
        assert harness.record(run_id).error == {
            "type": "expression", "step": "nap",
            "message": f"'{'x' * 57}...' is not a duration (use e.g. 500ms, 30s, 15m, 24h, 2d, "
                       "1w, 1h30m or ISO 8601 like PT30S): {{ d }}"}


async def test_an_invalid_event_quotes_an_excerpt_of_the_value_it_refuses(
        tmp_path: Path, store_url: str) -> None:
    manifests = ("events:\n  signup:\n    correlate_on: [name]\n    schema:\n"
                 "      type: object\n      properties:\n"
                 "        name: { type: string, maxLength: 5 }\n")
    with Harness(tmp_path, start=START, store_url=store_url, manifests=manifests) as harness:
        event = harness.send("signup", {"name": "y" * 100_000})
    assert (event.state.value, event.errors) == (
        "invalid", (f"name: '{'y' * 56}... is too long",))

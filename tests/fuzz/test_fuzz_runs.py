"""Fuzzing what a run keeps: any JSON-shaped inputs, and any payload of the event it waits for,
either come back from the run's row, its history and its journal, once the run has finished,
as the same JSON with the same Python types on either store, or are refused with one of
tarry's own errors that is not the store's, before anything is stored. (On PostgreSQL the rows
a write inserts together go as one JSON document of JSON texts, and jsonb keeps a number's
value, not its spelling: ``tarry.values.load_json`` reads both stores alike.)"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz_support import fuzz, hostile_json, outcome
from hypothesis import event, example, given

from tarry import eventloop
from tarry.actions import ActionContext
from tarry.errors import StoreError, TarryError
from tarry.model import EventState, RunStatus
from tarry.testing import Harness
from tarry.values import load_json

MANIFESTS = """\
events:
  e:
    correlate_on: [k]
"""
FLOW = """\
flow: keeps
inputs:
  v: { type: any }
  key: { type: string, required: true }
steps:
  - r: { wait_for: e, match: { k: "{{ key }}" }, timeout: 1d }
  - echo: { test.echo: { value: "{{ r.event.x }}" } }
  - keep: { set: { v: "{{ v }}", got: "{{ echo.value }}" } }
"""
_KEYS = itertools.count()


def echo(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    """An action that notes its argument in the run's history and returns it (journalled)."""
    ctx.note(as_text(args["value"]))
    return {"value": args["value"]}


def as_text(value: Any) -> str:
    """``value`` as the text ``echo`` notes (its keys sorted: jsonb orders an object's keys
    its own way)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    """One harness for all the examples of a test (each example runs a run of its own)."""
    h = Harness(tmp_path, store_url=store_url, manifests=MANIFESTS,
                actions={"test.echo": echo})
    yield h
    h.close()


@fuzz(40)
@given(inputs=hostile_json(), payload=hostile_json())
@example(inputs="a\x00b", payload=None)
@example(inputs=None, payload="\ud800")
@example(inputs={"\U0001f600 \u2028 \\u0000 '\"": ["é", "\\", "%(rows)s", "$1"]},
         payload={"": -0.0, "n": 10**30, "f": 5e-324, "g": 1.7976931348623157e308,
                  "h": 1e16, "i": 2.0, "j": -1.5e-7, "k": [1e20, 0.1]})
@example(inputs="x" * 70_000, payload=None)
def test_inputs_and_payloads_come_back_unchanged_or_are_refused_as_bad_data(
        harness: Harness, inputs: Any, payload: Any) -> None:
    key = f"k{next(_KEYS)}"
    flow = harness.flow(FLOW)
    started = outcome(lambda: harness.start(flow, {"v": inputs, "key": key}))
    if isinstance(started, Exception):
        event("inputs refused")
        assert_bad_data(started)
        return
    eventloop.run(harness.run_due())  # the run waits for its event
    sent = outcome(lambda: harness.send("e", {"k": key, "x": payload}))
    if isinstance(sent, Exception):
        event("payload refused")
        assert_bad_data(sent)
        return
    assert sent.state is EventState.DELIVERED
    event("kept")
    eventloop.run(harness.run_until_idle())
    record = harness.record(started)
    assert record.status is RunStatus.SUCCEEDED, record.error
    assert same(record.inputs["v"], stored(inputs))
    assert same(harness.document(started)["bindings"]["keep"],
                {"v": stored(inputs), "got": stored(payload)})
    [note] = [entry for entry in harness.engine.store.history(started) if entry.kind == "log"]
    assert note.data == {"message": as_text(stored(payload))}
    journal = {entry.key: entry.value
               for entry in harness.engine.store.journals([started])[started]}
    assert same(journal["echo"], {"value": stored(payload)})


def stored(value: Any) -> Any:
    """``value`` as a store gives it back: JSON's numbers by their value (1e+20 is the
    integer 100000000000000000000, -0.0 is 0.0), whatever the store."""
    return load_json(json.dumps(value))


def same(found: Any, expected: Any) -> bool:
    """Whether two values are the same JSON, types included (``1 == 1.0`` is not enough),
    whatever the order of an object's keys (jsonb orders them its own way)."""
    return json.dumps(found, sort_keys=True) == json.dumps(expected, sort_keys=True)


def assert_bad_data(error: Exception) -> None:
    """``error`` is tarry's refusal of a value, not a store's failure."""
    assert isinstance(error, TarryError), repr(error)
    assert not isinstance(error, StoreError), f"bad data reported as an outage: {error}"

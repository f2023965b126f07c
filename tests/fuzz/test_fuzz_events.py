"""Fuzzing event ingestion: ``Engine.send`` with any JSON-shaped payload and id either
records the event (delivered, buffered, unmatched, invalid or a duplicate) or refuses it with
one of tarry's own errors that is not the store's: bad data is never reported as an outage,
on either store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz_support import fuzz, hostile_json, outcome
from hypothesis import example, given
from hypothesis import strategies as st

from tarry.errors import StoreError, TarryError
from tarry.model import EventState
from tarry.testing import Harness

MANIFESTS = """\
events:
  e:
    correlate_on: [k]
    schema: { type: object, properties: { n: { type: integer } } }
"""


def deep(levels: int) -> dict[str, Any]:
    """An object nested ``levels`` deep."""
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    """One harness for all the examples of a test (events accumulate; that is fine)."""
    h = Harness(tmp_path, store_url=store_url, manifests=MANIFESTS)
    waiting = h.flow("flow: w\nsteps:\n  - r: { wait_for: e, match: { k: x }, timeout: 1d }\n")
    h.start(waiting)
    yield h
    h.close()


@fuzz(40)
@given(data=hostile_json() | st.dictionaries(st.just("k"), hostile_json(), min_size=1),
       event_id=st.none() | st.text(max_size=30))
@example(data={"k": deep(3000)}, event_id=None)
@example(data={"k": "x", "n": float("nan")}, event_id=None)
@example(data={"k": "a\x00b"}, event_id="id\x00")
@example(data={"k": "\ud800"}, event_id="\udfff")
@example(data={"k": 10**4200}, event_id=None)
@example(data={"k": "x" * 20_000}, event_id="i" * 20_000)
def test_any_payload_is_recorded_or_refused_as_bad_data(
        harness: Harness, data: Any, event_id: str | None) -> None:
    result = outcome(lambda: harness.send("e", data, id=event_id))
    if isinstance(result, Exception):
        assert isinstance(result, TarryError), repr(result)
        assert not isinstance(result, StoreError), f"bad data reported as an outage: {result}"
    else:
        assert result.state in set(EventState)

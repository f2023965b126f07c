"""Sending many events in one transaction (SPEC 3.5): send_each and send_many, and concurrent
``engine.aio.send`` calls committed together, on both stores."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tarry.engine.runtime import SendRequest
from tarry.errors import InvalidValue, StoreError, StoreUnavailable, UnknownEventType
from tarry.model import EventRecord, EventState, RunStatus
from tarry.store.sqlstore import SqlStore, Tx
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

MANIFESTS = """
events:
  approval:
    correlate_on: [message]
    schema: { type: object, required: [message, approved] }
    buffer: 10m
  reply:
    correlate_on: [ticket]
    buffer: 0
  label:
    correlate_on: [repo]
"""

WAITER = """
flow: waiter
inputs:
  message: { type: string, required: true }
steps:
  - approval:
      wait_for: approval
      match: { message: "{{ message }}" }
      timeout: 1d
  - received: { if: "{{ approval.status == 'received' }}", exit: received }
  - done: { exit: timeout }
"""

DEPLOY = """
flow: deploy
on:
  - event: label
steps:
  - done: { exit: deployed }
"""


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "deploy.yaml").write_text(DEPLOY, encoding="utf-8")
    h = Harness(tmp_path, start=START, manifests=MANIFESTS, store_url=store_url)
    h.engine.catalog.resolve("deploy")  # its source saved (once) before writes are counted
    yield h
    h.close()


def counting_writes(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One item per write transaction the store opens from now on (the real store runs
    them; this only counts)."""
    store = harness.engine.store
    assert isinstance(store, SqlStore)
    opened: list[int] = []
    real = store._transaction

    def counted(*, write: bool, lease: bool = False) -> AbstractContextManager[Tx]:
        if write:
            opened.append(1)
        return real(write=write, lease=lease)

    monkeypatch.setattr(store, "_transaction", counted)
    return opened


async def waiting_run(harness: Harness, message: str) -> str:
    run_id = harness.start(harness.flow(WAITER), {"message": message})
    await harness.run_due()
    assert harness.record(run_id).status is RunStatus.WAITING
    return run_id


async def test_one_batch_has_every_outcome_and_starts_its_triggers_in_one_transaction(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    waiter = await waiting_run(harness, "m-1")
    earlier = harness.send("reply", {"ticket": "T-0"}, id="sent-before")
    writes = counting_writes(harness, monkeypatch)
    results = harness.engine.send_each([
        SendRequest("approval", {"message": "m-1", "approved": True}, "delivered"),
        SendRequest("approval", {"message": "m-2", "approved": True}, "buffered"),
        SendRequest("reply", {"ticket": "T-9"}, "unmatched"),
        SendRequest("approval", {"message": "m-1"}, "invalid"),
        SendRequest("reply", {"ticket": "T-other"}, "sent-before"),
        SendRequest("approval", {"message": "m-3", "approved": False}, "delivered"),
        SendRequest("nope", {}, "unknown"),
        SendRequest("label", {"repo": "acme/web"}, "starts")])
    assert writes == [1]
    refused = results.pop(6)
    assert isinstance(refused, UnknownEventType)
    records = [result for result in results if isinstance(result, EventRecord)]
    assert [(r.id, r.state) for r in records] == [
        ("delivered", EventState.DELIVERED), ("buffered", EventState.BUFFERED),
        ("unmatched", EventState.UNMATCHED), ("invalid", EventState.INVALID),
        ("sent-before", EventState.DUPLICATE), ("delivered", EventState.DUPLICATE),
        ("starts", EventState.BUFFERED)]
    assert records[0].runs == (waiter,)
    assert records[3].errors
    assert records[4] == EventRecord(**{**earlier.__dict__, "state": EventState.DUPLICATE})
    assert records[5].data == {"message": "m-1", "approved": True}  # the first one's
    [started] = records[6].started
    assert harness.record(started).flow == "deploy"
    assert harness.engine.store.get_event("starts").started == (started,)
    assert [harness.engine.store.get_event(r.id).state for r in records[:4]] == [
        EventState.DELIVERED, EventState.BUFFERED, EventState.UNMATCHED, EventState.INVALID]
    await harness.run_until_idle()
    assert (harness.record(waiter).exit, harness.record(started).exit) == (
        "received", "deployed")


async def test_a_payload_is_stored_and_returned_as_every_read_returns_it(
        harness: Harness) -> None:
    waiter = await waiting_run(harness, "m-1")
    sent = harness.send("approval", {"message": "m-1", "approved": True, "note": "ünï ✓",
                                     "pair": (1, 2), "big": 1e16, "zero": -0.0}, id="e-1")
    stored = {"message": "m-1", "approved": True, "note": "ünï ✓", "pair": [1, 2],
              "big": 10**16, "zero": 0.0}
    assert sent.runs == (waiter,)
    assert sent.data == harness.engine.store.get_event("e-1").data == stored
    assert [event.data for event in harness.engine.store.inbox([waiter])[waiter]] == [stored]


async def test_concurrent_async_sends_share_one_transaction(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    waiters = [await waiting_run(harness, f"m-{i}") for i in range(10)]
    writes = counting_writes(harness, monkeypatch)
    records = await asyncio.gather(*(
        harness.engine.aio.send("approval", {"message": f"m-{i}", "approved": True})
        for i in range(10)), harness.engine.aio.send("nope", {}), return_exceptions=True)
    assert writes == [1]
    assert isinstance(records.pop(), UnknownEventType)
    assert [r.runs if isinstance(r, EventRecord) else r for r in records] == [
        (waiter,) for waiter in waiters]


@contextmanager
def failing_first_commit(harness: Harness, monkeypatch: pytest.MonkeyPatch,
                         error: StoreError) -> Iterator[None]:
    """The store's first write transaction from now on fails with ``error`` just before it
    would commit: the real store rolls it back."""
    store = harness.engine.store
    assert isinstance(store, SqlStore)
    real = store._transaction
    failed: list[StoreError] = []

    @contextmanager
    def failing(*, write: bool, lease: bool = False) -> Iterator[Tx]:
        with real(write=write, lease=lease) as tx:
            yield tx
            if write and not failed:
                failed.append(error)
                raise error

    monkeypatch.setattr(store, "_transaction", failing)
    yield
    assert failed == [error]


async def test_a_batch_whose_transaction_fails_is_written_again_event_by_event(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    waiter = await waiting_run(harness, "m-1")
    with failing_first_commit(harness, monkeypatch, StoreError("the commit failed")):
        first, again, other = harness.engine.send_each([
            SendRequest("approval", {"message": "m-1", "approved": True}, "e-1"),
            SendRequest("approval", {"message": "m-1", "approved": True}, "e-1"),
            SendRequest("label", {"repo": "acme/web"}, "e-2")])
    assert isinstance(first, EventRecord)
    assert isinstance(again, EventRecord)
    assert isinstance(other, EventRecord)
    assert (first.state, first.runs, again.state) == (
        EventState.DELIVERED, (waiter,), EventState.DUPLICATE)
    assert len(other.started) == 1
    assert [r.flow for r in harness.engine.store.list_runs()].count("deploy") == 1
    assert len(harness.engine.store.inbox([waiter])[waiter]) == 1  # delivered once


async def test_an_unavailable_store_refuses_every_send_of_the_batch_and_writes_none(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    waiter = await waiting_run(harness, "m-1")
    down = StoreUnavailable("the server went away")
    with failing_first_commit(harness, monkeypatch, down):
        results = await asyncio.gather(
            harness.engine.aio.send("approval", {"message": "m-1", "approved": True}),
            harness.engine.aio.send("label", {"repo": "acme/web"}), return_exceptions=True)
    assert results == [down, down]
    assert harness.engine.events() == []
    assert [r.id for r in harness.engine.store.list_runs()] == [waiter]
    assert harness.engine.store.inbox([waiter]) == {}
    assert harness.record(waiter).status is RunStatus.WAITING


def test_send_many_records_every_event_of_a_type_in_one_transaction(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    writes = counting_writes(harness, monkeypatch)
    records = harness.engine.send_many("reply", [{"ticket": "T-1"}, {"ticket": "T-2"}],
                                       ids=["a", None])
    assert writes == [1]
    assert [(r.id == "a", r.state) for r in records] == [
        (True, EventState.UNMATCHED), (False, EventState.UNMATCHED)]
    assert {e.id for e in harness.engine.events()} == {r.id for r in records}


def test_send_many_with_one_value_that_cannot_be_stored_sends_nothing(
        harness: Harness) -> None:
    with pytest.raises(InvalidValue):
        harness.engine.send_many("reply", [{"ticket": "T-1"}, {"ticket": "T-2", "x": 1e400}])
    assert harness.engine.events() == []

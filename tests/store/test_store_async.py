"""The async store boundary and the async engine facade: the same operations, awaited."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tarry.errors import Conflict, NotFound, UnknownEventType
from tarry.model import EventState, NewRun, RunStatus
from tarry.store import aio
from tarry.store.aio import AsyncStore
from tarry.store.base import Store
from tarry.store.sqlite import SQLiteStore
from tarry.testing import Harness

NOW = datetime(2026, 1, 1, tzinfo=UTC)

_NOT_AWAITED = {"migrate", "pending_migrations", "close", "concurrency", "subscribe",
                "change_hint", "write_waited"}
"""Store members the async boundary leaves out: schema upkeep and the store's lifetime
belong to whoever opened it, off any event loop; a push subscription and a change hint are
the boundary's own (``wait_for_change``); ``write_waited`` is a flag read where it is kept."""

MANIFESTS = """
events:
  order.paid:
    correlate_on: [order]
"""

WAITER = """
flow: waiter
steps:
  - paid:
      wait_for: order.paid
      match: { order: "A1" }
      timeout: 1d
"""


def test_every_store_verb_can_be_awaited() -> None:
    verbs = {name for name, _ in inspect.getmembers(Store) if not name.startswith("_")}
    awaited = {name for name in verbs
               if inspect.iscoroutinefunction(getattr(AsyncStore, name, None))}
    assert verbs - _NOT_AWAITED == awaited


def _run(run_id: str, status: RunStatus = RunStatus.PENDING) -> NewRun:
    return NewRun(id=run_id, flow="f", flow_digest="d", status=status, inputs={},
                  target=None, created_at=NOW, due_at=NOW if not status.is_terminal else None)


async def test_an_awaited_verb_runs_on_the_store_thread_and_returns_what_the_verb_returns(
        store: Store) -> None:
    astore = AsyncStore(store)
    try:
        await astore.create_run(_run("r1"), [])
        claimed = await astore.claim_due(NOW, "w", NOW + timedelta(seconds=30), 10)
        assert [record.id for record in claimed] == ["r1"]
        assert (await astore.get_run("r1")).status is RunStatus.RUNNING
        where = await astore.call(lambda: threading.current_thread().name)
        assert where.startswith("tarry-store")
        assert where != threading.current_thread().name
    finally:
        astore.close()


async def test_an_awaited_verb_raises_what_the_verb_raises(store: Store) -> None:
    astore = AsyncStore(store)
    try:
        with pytest.raises(NotFound, match=r"^no run with id 'nope'$"):
            await astore.get_run("nope")
        await astore.create_run(_run("r2", RunStatus.SUCCEEDED), [])
        with pytest.raises(Conflict, match=r"^run r2 already succeeded$"):
            await astore.cancel("r2", "alice", NOW)
    finally:
        astore.close()


def test_sqlite_has_one_store_thread_and_postgres_one_per_pooled_connection(
        store: Store) -> None:
    astore = AsyncStore(store)
    assert astore.threads == store.concurrency
    assert astore.threads == (1 if type(store).__name__ == "SQLiteStore" else 8)
    astore.close()


async def test_a_change_by_another_store_ends_the_wait_for_a_change(
        store: Store, store_factory: Callable[[], Store]) -> None:
    astore = AsyncStore(store)
    try:
        token = await astore.change_token()
        assert await astore.wait_for_change(token, 0.01) == token  # nothing changed
        other = store_factory()
        other.create_run(_run("r3"), [])
        assert await astore.wait_for_change(token, 5.0) != token
    finally:
        astore.close()


async def test_a_change_made_during_the_wait_ends_it(
        store: Store, store_factory: Callable[[], Store]) -> None:
    astore = AsyncStore(store)
    try:
        token = await astore.change_token()
        waiting = asyncio.ensure_future(astore.wait_for_change(token, 5.0))
        await asyncio.sleep(0.05)  # the waiter is between two looks at the store
        await asyncio.to_thread(store_factory().create_run, _run("r4"), [])
        assert await waiting != token
    finally:
        astore.close()


async def test_a_commit_the_hint_saw_before_it_was_visible_ends_the_wait_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, other = (SQLiteStore(tmp_path / "tarry.db") for _ in range(2))
    store.migrate()
    monkeypatch.setattr(aio, "_CHANGE_POLL_SECONDS", 60.0)  # no fallback look in this test
    monkeypatch.setattr(aio, "_SETTLE_SECONDS", 60.0)
    moves = [0]
    monkeypatch.setattr(store, "change_hint", lambda: lambda: moves[0])
    astore = AsyncStore(store)
    try:
        token = await astore.change_token()
        waiting = asyncio.ensure_future(astore.wait_for_change(token, 30.0))
        await asyncio.sleep(0.05)
        moves[0] += 1  # the file moved: a commit on its way, not yet visible
        await asyncio.sleep(0.05)
        await asyncio.to_thread(other.create_run, _run("r5"), [])  # visible; no move again
        assert await asyncio.wait_for(waiting, 10.0) != token
    finally:
        astore.close()
        store.close()
        other.close()


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    h = Harness(tmp_path, start=NOW, manifests=MANIFESTS, store_url=store_url)
    yield h
    h.close()


async def test_the_async_engine_starts_gets_lists_sends_and_cancels(harness: Harness) -> None:
    aio = harness.engine.aio
    started = await aio.start(harness.flow(WAITER))
    assert (await aio.get(started.id)).status is RunStatus.PENDING
    assert [record.id for record in await aio.runs(status=RunStatus.PENDING)] == [started.id]
    await harness.run_due()
    assert (await aio.document(started.id))["waiting_for"]["event_type"] == "order.paid"
    sent = await aio.send("order.paid", {"order": "A1"}, id="pay-1")
    assert (sent.state, sent.runs) == (EventState.DELIVERED, (started.id,))
    assert [event.id for event in await aio.events()] == ["pay-1"]
    await harness.run_due()
    assert (await aio.get(started.id)).status is RunStatus.SUCCEEDED
    with pytest.raises(Conflict, match=rf"^run {started.id} already succeeded$"):
        await aio.cancel(started.id, by="alice")
    with pytest.raises(UnknownEventType, match=r"^unknown event type 'order.payd' \(did you"):
        await aio.send("order.payd", {"order": "A1"})


async def test_the_async_engine_cancels_a_waiting_run_and_lists_held_runs(
        harness: Harness) -> None:
    aio = harness.engine.aio
    started = await aio.start(harness.flow(WAITER))
    await harness.run_due()
    cancelled = await aio.cancel(started.id, by="alice")
    assert cancelled.status is RunStatus.CANCELLED
    assert await aio.held() == []

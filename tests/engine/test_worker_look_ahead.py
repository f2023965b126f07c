"""A worker on the real clock claims runs nothing can reach a little ahead of their instant and
runs them at it; a run an event or a person can still reach is claimed only when due.

These run on the real clock (claiming ahead is what a real clock's worker does; a virtual
clock's worker claims only what is due), with a wide window so that the machine's load cannot
decide the outcome; each takes well under two seconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from worker_support import real_clock_engine, until

from tarry.actions import ActionRegistry
from tarry.clock import SystemClock, VirtualClock, from_iso
from tarry.engine.catalog import FlowCatalog
from tarry.engine.runtime import Engine
from tarry.engine.worker import LOOK_AHEAD, Worker
from tarry.language.loader import parse_flow
from tarry.model import InboxEvent, RunRecord, RunStatus
from tarry.store import open_store
from tarry.store.aio import AsyncStore

WINDOW = timedelta(seconds=5)
"""Far wider than any wait below: whatever can be claimed ahead is, at the first look."""

TIMER = """
flow: timer
steps:
  - pause:
      wait: { for: 400ms }
  - after: { log: { message: woke } }
"""

REPLY = """
flow: reply
steps:
  - reply:
      wait_for: email.reply
      match: { ticket: "T1" }
      timeout: 800ms
"""

MANIFESTS = """
events:
  email.reply:
    correlate_on: [ticket]
"""


class _Claims:
    """The store boundary, recording which runs each claim took and when (a claim of its
    own, or one in a checkpoint's transaction)."""

    def __init__(self, store: AsyncStore) -> None:
        self._store = store
        self.taken: dict[str, datetime] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def claim_due_with_inbox(self, now: datetime, *args: Any, **kwargs: Any
                                   ) -> list[tuple[RunRecord, list[InboxEvent]]]:
        claimed: list[tuple[RunRecord, list[InboxEvent]]] = \
            await self._store.claim_due_with_inbox(now, *args, **kwargs)
        self._took(now, claimed)
        return claimed

    async def checkpoint_and_claim(self, worker: str, now: datetime, *args: Any,
                                   **kwargs: Any) -> Any:
        outcomes, claimed = await self._store.checkpoint_and_claim(worker, now, *args,
                                                                   **kwargs)
        self._took(now, claimed)
        return outcomes, claimed

    def _took(self, now: datetime, claimed: list[tuple[RunRecord, list[InboxEvent]]]) -> None:
        self.taken.update({record.id: now for record, _ in claimed
                           if record.status is RunStatus.WAITING})


@pytest.fixture
def engine(tmp_path: Path, store_url: str) -> Iterator[Engine]:
    engine = real_clock_engine(tmp_path, store_url, MANIFESTS)
    yield engine
    engine.close()


def _worker(engine: Engine, claims: _Claims) -> Worker:
    worker = engine.worker(concurrency=4, store=claims)  # type: ignore[arg-type]
    worker.look_ahead = WINDOW
    return worker


async def test_a_timer_is_claimed_ahead_and_runs_at_its_instant(engine: Engine) -> None:
    claims = _Claims(engine.async_store)
    stop = asyncio.Event()
    task = asyncio.create_task(_worker(engine, claims).run(stop))
    run = engine.start(parse_flow(TIMER, "timer.yaml")).id
    await until(lambda: engine.store.get_run(run).status is RunStatus.SUCCEEDED)
    stop.set()
    await task

    history = engine.store.history(run)
    instant = from_iso(next(e for e in history if e.kind == "wait.registered").data["until"])
    woke = next(e for e in history if e.kind == "step.started" and e.step == "after").at
    assert claims.taken[run] < instant <= woke


async def test_a_run_an_event_can_reach_is_claimed_only_when_due_and_takes_the_event(
        engine: Engine) -> None:
    claims = _Claims(engine.async_store)
    stop = asyncio.Event()
    task = asyncio.create_task(_worker(engine, claims).run(stop))
    run = engine.start(parse_flow(REPLY, "reply.yaml")).id
    await until(lambda: engine.store.get_run(run).status is RunStatus.WAITING)
    await asyncio.sleep(0.1)  # within the window, before the deadline
    engine.send("email.reply", {"ticket": "T1"})
    await until(lambda: engine.store.get_run(run).status is RunStatus.SUCCEEDED)
    stop.set()
    await task

    kinds = [entry.kind for entry in engine.store.history(run)]
    assert "event.received" in kinds
    assert "wait.timeout" not in kinds


def test_a_worker_claims_ahead_on_the_real_clock_only(tmp_path: Path) -> None:
    registry = ActionRegistry()
    store = open_store(f"sqlite:///{tmp_path / 'tarry.db'}")
    catalog = FlowCatalog(tmp_path, store, registry.names())
    real = Engine(store, catalog, registry, SystemClock())
    virtual = Engine(store, catalog, registry, VirtualClock())
    assert (real.worker().look_ahead, virtual.worker().look_ahead) == (LOOK_AHEAD, timedelta(0))
    store.close()


"""An idle worker sleeps until the earliest due instant; a change in the store makes it read
that instant again, and it claims only when something is due (or within its look-ahead)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from worker_support import real_clock_engine, until

from tarry.clock import SystemClock
from tarry.engine.runtime import Engine
from tarry.language.loader import parse_flow
from tarry.model import NewRun, RunStatus
from tarry.store import open_store
from tarry.store.aio import AsyncStore

GREET = """
flow: greet
steps:
  - hello: { log: { message: hello } }
"""


class _Looks:
    """The store boundary, counting the worker's claims and its reads of the next due
    instant."""

    def __init__(self, store: AsyncStore) -> None:
        self._store = store
        self.claims = 0
        self.due_reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def claim_due_with_inbox(self, *args: Any, **kwargs: Any) -> Any:
        self.claims += 1
        return await self._store.claim_due_with_inbox(*args, **kwargs)

    async def next_due_at(self) -> datetime | None:
        self.due_reads += 1
        return await self._store.next_due_at()


@pytest.fixture
def engine(tmp_path: Path, store_url: str) -> Iterator[Engine]:
    engine = real_clock_engine(tmp_path, store_url)
    yield engine
    engine.close()


async def test_a_change_that_makes_nothing_due_sooner_costs_no_claim(
        engine: Engine, store_url: str) -> None:
    looks = _Looks(engine.async_store)
    stop = asyncio.Event()
    task = asyncio.create_task(engine.worker(store=looks).run(stop))  # type: ignore[arg-type]
    await until(lambda: looks.due_reads >= 1)  # idle: nothing is due
    claims, reads = looks.claims, looks.due_reads

    elsewhere = open_store(store_url)  # another process suspends a run due in an hour
    later = SystemClock().now() + timedelta(hours=1)
    elsewhere.create_run(NewRun(id="later", flow="greet", flow_digest="d",
                                status=RunStatus.WAITING, inputs={}, target=None,
                                created_at=later - timedelta(hours=1), due_at=later), [])
    elsewhere.close()
    await until(lambda: looks.due_reads > reads)  # the worker saw the change
    assert looks.claims == claims

    run = engine.start(parse_flow(GREET, "greet.yaml")).id  # due now: claimed and run
    await until(lambda: engine.store.get_run(run).status is RunStatus.SUCCEEDED)
    stop.set()
    await task
    assert looks.claims > claims


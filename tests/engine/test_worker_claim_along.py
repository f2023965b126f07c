"""A busy worker claims its next due runs in the transaction of each checkpoint, not in one
of their own: one transaction per batch instead of two."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from worker_support import real_clock_engine, until

from tarry.engine.runtime import Engine
from tarry.language.loader import parse_flow
from tarry.model import RunStatus
from tarry.store.aio import AsyncStore

GREET = """
flow: greet
steps:
  - hello: { log: { message: hello } }
"""


class _Claims:
    """The store boundary, counting the runs each kind of claim took."""

    def __init__(self, store: AsyncStore) -> None:
        self._store = store
        self.alone = 0
        self.along = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def claim_due_with_inbox(self, *args: Any, **kwargs: Any) -> Any:
        claimed = await self._store.claim_due_with_inbox(*args, **kwargs)
        self.alone += len(claimed)
        return claimed

    async def checkpoint_and_claim(self, *args: Any, **kwargs: Any) -> Any:
        outcomes, claimed = await self._store.checkpoint_and_claim(*args, **kwargs)
        self.along += len(claimed)
        return outcomes, claimed


@pytest.fixture
def engine(tmp_path: Path, store_url: str) -> Iterator[Engine]:
    engine = real_clock_engine(tmp_path, store_url)
    yield engine
    engine.close()


async def test_each_checkpoint_claims_the_run_that_takes_its_slot(engine: Engine) -> None:
    flow = parse_flow(GREET, "greet.yaml")
    runs = [engine.start(flow).id for _ in range(4)]
    claims = _Claims(engine.async_store)
    stop = asyncio.Event()
    worker = engine.worker(store=claims, concurrency=1)  # type: ignore[arg-type]
    task = asyncio.create_task(worker.run(stop))

    await until(lambda: all(engine.store.get_run(run).status is RunStatus.SUCCEEDED
                            for run in runs))
    stop.set()
    await task
    assert (claims.alone, claims.along) == (1, 3)  # the first alone, each next one along


async def test_a_worker_run_once_claims_nothing_along(engine: Engine) -> None:
    # run_once (a test's or a scenario's worker) claims in batches of its own: what it
    # handles is what was due when it looked.
    flow = parse_flow(GREET, "greet.yaml")
    runs = [engine.start(flow).id for _ in range(3)]
    claims = _Claims(engine.async_store)
    worker = engine.worker(store=claims, concurrency=1)  # type: ignore[arg-type]

    assert await worker.run_once() == 3
    assert (claims.alone, claims.along) == (3, 0)
    assert {engine.store.get_run(run).status for run in runs} == {RunStatus.SUCCEEDED}


class _HeldCheckpoints(_Claims):
    """:class:`_Claims` whose claiming checkpoints wait until :attr:`release` is set."""

    def __init__(self, store: AsyncStore) -> None:
        super().__init__(store)
        self.release = asyncio.Event()
        self.held = asyncio.Event()

    async def checkpoint_and_claim(self, *args: Any, **kwargs: Any) -> Any:
        self.held.set()
        await self.release.wait()
        return await super().checkpoint_and_claim(*args, **kwargs)


async def test_schedules_are_looked_at_while_the_loop_waits_for_a_claiming_checkpoint(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    # Under sustained load the loop never claims on its own; due schedule occurrences were
    # created only before its own claims.
    run = engine.start(parse_flow(GREET, "greet.yaml")).id
    store = _HeldCheckpoints(engine.async_store)
    worker = engine.worker(store=store, concurrency=4)  # type: ignore[arg-type]
    looks: list[bool] = []  # each look: whether a claiming checkpoint was in flight
    real = worker._fire_schedules

    async def fire_schedules() -> None:
        looks.append(worker.committer.claiming)
        await real()

    monkeypatch.setattr(worker, "_fire_schedules", fire_schedules)
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop))
    await until(store.held.is_set)  # the run's checkpoint, claiming, is in flight
    await until(lambda: True in looks)  # the loop looked while it waited for it
    store.release.set()
    await until(lambda: engine.store.get_run(run).status is RunStatus.SUCCEEDED)
    stop.set()
    await task

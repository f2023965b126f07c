"""Real-time worker scheduling: leases of queued runs, and wakes not delayed by slow actions."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext, ActionFunction, ActionRegistry
from tarry.clock import Clock, SystemClock, VirtualClock, from_iso
from tarry.engine.builtins import register_builtins
from tarry.engine.catalog import FlowCatalog
from tarry.engine.runtime import Engine
from tarry.errors import StoreUnavailable
from tarry.language.loader import parse_flow
from tarry.model import RunStatus
from tarry.store import open_store

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

TIMER = """
flow: timer
steps:
  - pause:
      wait: { for: 300ms }
"""

FLOW = """
flow: slow
steps:
  - work:
      slow.action: {}
"""


@pytest.mark.slow
async def test_queued_runs_keep_their_leases(tmp_path: Path) -> None:
    calls: list[str] = []

    async def slow_action(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        calls.append(ctx.run_id)
        await asyncio.sleep(0.15)
        return {}

    first, second = _engine(tmp_path, slow_action), _engine(tmp_path, slow_action)
    flow = parse_flow(FLOW, "slow.yaml", actions={"slow.action"})
    runs = [first.start(flow).id for _ in range(6)]
    workers = [e.worker(concurrency=1) for e in (first, second)]
    for worker in workers:
        worker.lease = timedelta(milliseconds=300)  # far shorter than the queue ahead of a run
    stop = asyncio.Event()
    tasks = [asyncio.create_task(worker.run(stop)) for worker in workers]
    for _ in range(100):
        if all(first.store.get_run(r).status is RunStatus.SUCCEEDED for r in runs):
            break
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.gather(*tasks)
    assert sorted(calls) == sorted(runs)
    first.close()
    second.close()


async def test_a_slow_action_does_not_delay_a_timer_due_meanwhile(tmp_path: Path) -> None:
    release = asyncio.Event()

    async def slow_action(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        await release.wait()  # runs until the timer beside it has woken
        return {}

    clock = VirtualClock(START)
    engine = _engine(tmp_path, slow_action, clock)
    slow = engine.start(parse_flow(FLOW, "slow.yaml", actions={"slow.action"})).id
    timer = engine.start(parse_flow(TIMER, "timer.yaml")).id
    stop = asyncio.Event()
    task = asyncio.create_task(engine.worker(concurrency=4).run(stop))
    await _until(lambda: engine.store.get_run(timer).status is RunStatus.SUCCEEDED)
    assert engine.store.get_run(slow).status is RunStatus.RUNNING  # still in its action
    release.set()
    await _until(lambda: engine.store.get_run(slow).status is RunStatus.SUCCEEDED)
    stop.set()
    await task
    history = engine.store.history(timer)
    until = from_iso(next(e for e in history if e.kind == "wait.registered").data["until"])
    woke = next(e for e in history if e.kind == "step.completed").at
    assert woke == until == START + timedelta(milliseconds=300)  # at its instant, not later
    engine.close()


async def _until(condition: Callable[[], bool]) -> None:
    """Let the worker go on until ``condition`` holds (virtual time needs no waiting; the cap
    only stops a broken test)."""
    for _ in range(2_000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the condition never held")


def _engine(tmp_path: Path, slow_action: ActionFunction, clock: Clock | None = None) -> Engine:
    registry = ActionRegistry()
    register_builtins(registry)
    registry.register("slow.action", slow_action)
    store = open_store(f"sqlite:///{tmp_path / 'tarry.db'}")
    return Engine(store, FlowCatalog(tmp_path, store, registry.names()), registry,
                  clock or SystemClock())


@pytest.mark.slow
async def test_a_store_outage_while_idle_does_not_stop_the_worker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def quick(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        return {}

    engine = _engine(tmp_path, quick)
    real_next_due = engine.store.next_due_at
    outages = [StoreUnavailable("the database restarted")] * 3

    def flaky_next_due() -> Any:
        if outages:
            raise outages.pop()
        return real_next_due()

    monkeypatch.setattr(engine.store, "next_due_at", flaky_next_due)
    stop = asyncio.Event()
    task = asyncio.create_task(engine.worker(concurrency=2).run(stop))
    await asyncio.sleep(0.1)
    run = engine.start(parse_flow(TIMER, "timer.yaml")).id
    for _ in range(100):
        if engine.store.get_run(run).status is RunStatus.SUCCEEDED:
            break
        await asyncio.sleep(0.02)
    assert not task.done(), "the worker died"
    stop.set()
    await task
    assert outages == []
    assert engine.store.get_run(run).status is RunStatus.SUCCEEDED
    engine.close()

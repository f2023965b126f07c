"""Two workers sharing a store never execute the same run twice, even with runs queued."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry.clock import SystemClock
from tarry.engine.actions import ActionContext, ActionRegistry
from tarry.engine.builtins import register_builtins
from tarry.engine.catalog import FlowCatalog
from tarry.engine.runtime import Engine
from tarry.language.loader import parse_flow
from tarry.store import open_store
from tarry.store.base import RunStatus

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

    def engine() -> Engine:
        registry = ActionRegistry()
        register_builtins(registry)
        registry.register("slow.action", slow_action)
        store = open_store(f"sqlite:///{tmp_path / 'tarry.db'}")
        return Engine(store, FlowCatalog(tmp_path, store, registry.names()), registry,
                      SystemClock())

    first, second = engine(), engine()
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

"""A worker whose store fails for a moment (a lost connection, a database restart): the run is
never failed for the store's trouble, and no run is kept leased by a call that failed. Either
way the run resumes from its last checkpoint once its lease lapses."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext, ActionRegistry
from tarry.clock import Clock, SystemClock, VirtualClock
from tarry.engine.builtins import register_builtins
from tarry.engine.catalog import FlowCatalog
from tarry.engine.runtime import Engine
from tarry.errors import StoreUnavailable
from tarry.language.loader import parse_flow
from tarry.model import RunStatus
from tarry.store import open_store
from tarry.store.base import Store

FLOW = """
flow: noted
steps:
  - note:
      note: {}
  - done:
      set: { ok: true }
"""


class FlakyStore:
    """A real store whose verb ``failing`` raises ``StoreUnavailable`` on its first call."""

    def __init__(self, store: Store, failing: str) -> None:
        self._store = store
        self._failing = failing
        self.failed = 0

    def __getattr__(self, name: str) -> Any:
        verb = getattr(self._store, name)
        if name != self._failing or self.failed:
            return verb

        def fail(*_args: Any, **_kwargs: Any) -> Any:
            self.failed += 1
            raise StoreUnavailable("PostgreSQL store unavailable: connection lost")
        return fail


def flaky_engine(store_url: str, tmp_path: Path, clock: Clock, failing: str,
                 note: Callable[[dict[str, Any], ActionContext], None]) -> Engine:
    """An engine with the ``note`` action over a store whose ``failing`` verb fails once."""
    registry = ActionRegistry()
    register_builtins(registry)
    registry.register("note", note)
    store: Any = FlakyStore(open_store(store_url), failing)
    return Engine(store, FlowCatalog(tmp_path, store, registry.names()), registry, clock)


def kinds(engine: Engine, run_id: str) -> list[str]:
    return [entry.kind for entry in engine.store.history(run_id)]


async def test_a_failed_checkpoint_leaves_the_run_to_resume_after_its_lease_not_failed(
        tmp_path: Path, store_url: str) -> None:
    calls: list[str] = []
    clock = VirtualClock(datetime(2026, 3, 1, 9, 0, tzinfo=UTC))
    engine = flaky_engine(store_url, tmp_path, clock, "checkpoint",
                          lambda _args, ctx: calls.append(ctx.step_path))
    run_id = engine.start(parse_flow(FLOW, "noted.yaml", actions={"note"})).id
    worker = engine.worker(concurrency=1)

    await worker.run_once()  # the checkpoint after the action fails
    assert engine.store.get_run(run_id).status is RunStatus.RUNNING
    clock.advance(worker.lease)
    await worker.run_once()

    assert engine.store.get_run(run_id).status is RunStatus.SUCCEEDED
    assert calls == ["note", "note"]  # at least once: the action was not checkpointed
    assert kinds(engine, run_id).count("recovered") == 1
    assert "failed" not in kinds(engine, run_id)
    engine.close()


@pytest.mark.slow
async def test_a_claim_that_failed_leaves_no_run_leased(
        tmp_path: Path, store_url: str) -> None:
    """The claim and the inboxes of the claimed runs are one transaction: a failure of it
    leases nothing, so the next claim starts the run at once (no lease to wait out)."""
    calls: list[str] = []
    engine = flaky_engine(store_url, tmp_path, SystemClock(), "claim_due_with_inbox",
                          lambda _args, ctx: calls.append(ctx.step_path))
    run_id = engine.start(parse_flow(FLOW, "noted.yaml", actions={"note"})).id
    worker = engine.worker(concurrency=4)
    worker.lease = timedelta(milliseconds=300)  # renewed every 100 ms while held
    stop = asyncio.Event()
    working = asyncio.create_task(worker.run(stop))

    for _ in range(60):  # 3 s: ten leases
        if engine.store.get_run(run_id).status is RunStatus.SUCCEEDED:
            break
        await asyncio.sleep(0.05)
    stop.set()
    await working

    assert engine.store.get_run(run_id).status is RunStatus.SUCCEEDED
    assert calls == ["note"]
    assert kinds(engine, run_id)[:2] == ["created", "started"]
    engine.close()

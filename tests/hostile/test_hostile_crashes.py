"""Runs whose workers die running them, in one process: each death is simulated by a claim
that is never committed (the worker's lease lapses, as a SIGKILLed worker's does), on both
stores; ``test_hostile_processes.py`` kills real worker processes. A run taken over
``recovery_max`` times in a row is run once more; one taken over again is failed with
``error.type = crashed`` and never run again. A checkpoint starts the count afresh, and a
run whose first worker died before its first checkpoint still records its start."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext
from tarry.config import Limits
from tarry.model import RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
LEASE = timedelta(seconds=30)
FLOW = """
flow: fragile
steps:
  - call:
      touch: {}
  - nap:
      wait: { for: 1h }
"""


@pytest.fixture
def calls() -> list[str]:
    return []


@pytest.fixture
def harness(tmp_path: Path, store_url: str, calls: list[str]) -> Iterator[Harness]:
    def touch(_args: dict[str, Any], ctx: ActionContext) -> None:
        calls.append(ctx.run_id)

    with Harness(tmp_path, start=START, actions={"touch": touch}, store_url=store_url,
                 limits=Limits(recovery_max=2)) as h:
        yield h


def _die_running(harness: Harness, times: int) -> None:
    """Claim the due runs as ``times`` workers that each begin them (counting a takeover as
    a worker does) and die: every claim's lease lapses unrenewed."""
    store = harness.engine.store
    for death in range(times):
        now, worker = harness.clock.now(), f"dead-{death}"
        claimed = store.claim_due(now, worker, now + LEASE, 10)
        assert claimed
        for record in claimed:
            if record.status is RunStatus.RUNNING:
                assert store.count_recovery(record.id, worker) is not None
        harness.clock.advance(LEASE)  # nothing runs meanwhile: the claim's worker is dead


async def test_a_run_taken_over_more_than_recovery_max_times_fails_as_crashed(
        harness: Harness, calls: list[str]) -> None:
    good = harness.start(harness.flow(FLOW))
    await harness.run_due()
    bad = harness.start(harness.flow(FLOW))
    _die_running(harness, 3)  # the first claim, then two takeovers that died too
    await harness.run_due()  # the third takeover
    record = harness.record(bad)
    assert (record.status, record.error) == (RunStatus.FAILED, {
        "type": "crashed", "step": None,
        "message": "the worker running it stopped 3 times in a row before its next checkpoint "
                   "(a crash, os._exit or a kill); after 2 recoveries ([limits] recovery_max) "
                   "it is not run again"})
    assert calls == [good]  # never run again
    assert harness.history_kinds(bad) == ["created", "failed"]
    await harness.run_until_idle()
    assert harness.record(good).status is RunStatus.SUCCEEDED


async def test_a_run_taken_over_recovery_max_times_runs_and_records_its_start(
        harness: Harness, calls: list[str]) -> None:
    run_id = harness.start(harness.flow(FLOW))
    _die_running(harness, 2)
    await harness.run_due()
    record = harness.record(run_id)
    assert (record.status, record.recoveries) == (RunStatus.WAITING, 0)
    assert calls == [run_id]
    assert harness.history_kinds(run_id)[:3] == ["created", "started", "recovered"]


async def test_a_checkpoint_starts_the_count_again(harness: Harness, calls: list[str]) -> None:
    run_id = harness.start(harness.flow(FLOW))
    _die_running(harness, 2)
    await harness.run_due()  # recovered, checkpointed: waits an hour
    harness.clock.advance(timedelta(hours=1))
    _die_running(harness, 2)  # two deaths more after the wait
    await harness.run_until_idle()
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    assert harness.history_kinds(run_id).count("recovered") == 2


async def test_a_run_whose_worker_died_before_its_first_checkpoint_records_its_start(
        tmp_path: Path, store_url: str) -> None:
    with Harness(tmp_path, start=START, store_url=store_url) as harness:
        run_id = harness.start(harness.flow("flow: f\nsteps:\n  - a: { set: { x: 1 } }\n"))
        _die_running(harness, 1)
        await harness.run_due()
        assert harness.history_kinds(run_id) == [
            "created", "started", "recovered", "step.started", "step.completed", "succeeded"]

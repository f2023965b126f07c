"""A worker deletes expired runs in the background, a batch per transaction, and a worker
SIGKILLed in the middle leaves every run whole or gone: never a run without its history.
A real ``tarry worker`` process on each store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from retention_support import history_per_run, row_counts

from tarry.testing import Harness

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

TARRY = Path(sys.executable).parent / "tarry"
LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)
RUNS = 3000
"""Runs that ended in 2020: fifteen batches, so a kill lands in the middle."""
QUICK = "flow: quick\nsteps:\n  - a: { set: { x: 1 } }\n  - b: { set: { y: 2 } }\n"
ASKS = ("flow: asks\nsteps:\n  - approve:\n      ask: { title: Approve?, outcomes: [go] }\n"
        "      timeout: 3650d\n")


async def _stage(root: Path, store_url: str) -> tuple[list[str], list[str]]:
    """Runs that ended in 2020, and two that have waited since (one with an open task)."""
    with Harness(root, start=LONG_AGO, store_url=store_url) as harness:
        ended = [run.id for run in harness.engine.start_many(harness.flow(QUICK),
                                                             [None] * RUNS)]
        live = [harness.start(harness.flow(ASKS)) for _ in range(2)]
        await harness.run_until_idle(timedelta(seconds=1))
    return ended, live


def _worker(root: Path, store_url: str) -> subprocess.Popen[bytes]:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("TARRY_")},
           "TARRY_DATABASE": store_url, "TARRY_RETENTION_RUNS": "30d"}
    return subprocess.Popen([str(TARRY), "worker"], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.005)


async def test_a_purging_worker_killed_mid_batch_leaves_no_run_half_deleted(
        tmp_path: Path, store_url: str) -> None:
    ended, live = await _stage(tmp_path, store_url)
    whole = history_per_run(store_url, ended)
    assert len(whole) == RUNS
    live_rows = row_counts(store_url, live)

    worker = _worker(tmp_path, store_url)
    try:
        _until(lambda: row_counts(store_url, ended)["runs"] < RUNS, 60, "the first batch")
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)

    remaining = history_per_run(store_url, ended)
    assert 0 < len(remaining) < RUNS  # killed with part of the work done
    assert remaining == {run_id: whole[run_id] for run_id in remaining}  # each run whole
    gone = [run_id for run_id in ended if run_id not in remaining]
    assert set(row_counts(store_url, gone).values()) == {0}  # and each deleted one entirely

    worker = _worker(tmp_path, store_url)  # another worker goes on where it stopped
    try:
        _until(lambda: row_counts(store_url, ended)["runs"] == 0, 60, "the rest")
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)
    assert set(row_counts(store_url, ended).values()) == {0}
    assert row_counts(store_url, live) == live_rows  # the live runs and their tasks stay
    assert live_rows["tasks"] == 2

"""10,000 held runs with an ``after`` a day away cost no process and no check: only rows.

The runs are made exactly as ``Engine.start`` makes a held run (``held_run``) and inserted in
one transaction by the store's `create_runs` (10,000 durable transactions would take most of
a minute on PostgreSQL). A check that would run would append to a log file.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hold_support import T0, script

from tarry.config import Limits
from tarry.engine.runtime import new_run_id
from tarry.holds.admission import held_run, hold_of
from tarry.language.model import Flow
from tarry.model import CREATED, HistoryEntry, NewRun, RunStatus
from tarry.store import open_store
from tarry.testing import Harness

COUNT = 10_000
FLOW = """\
flow: deploy
hold:
  - after: "2026-01-02T09:00:00Z"
  - check: jira
steps:
  - go: { log: started }
"""


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Where a check that ran would have written."""
    return tmp_path / "checks.log"


@pytest.fixture
def harness(tmp_path: Path, store_url: str, log: Path) -> Iterator[Harness]:
    check = script(tmp_path / "checks", "jira.sh", f'echo "$1" >> "{log}"; exit 0')
    h = Harness(tmp_path / "h", start=T0, store_url=store_url, checks={"jira": check})
    yield h
    h.close()


def insert_held_runs(store_url: str, flow: Flow, count: int) -> None:
    """``count`` held runs of ``flow``, created at T0, in one transaction."""
    hold = hold_of(flow, None)
    assert hold is not None
    runs = [held_run(NewRun(id=new_run_id(), flow=flow.name, flow_digest=flow.digest,
                            status=RunStatus.PENDING, inputs={}, target=f"acme/web#{n}",
                            created_at=T0, due_at=T0), hold, Limits())
            for n in range(count)]
    store = open_store(store_url)
    try:
        store.create_runs([(run, [HistoryEntry(T0, CREATED)]) for run in runs])
    finally:
        store.close()


async def test_ten_thousand_held_runs_cost_no_process_and_no_check(
        harness: Harness, store_url: str, log: Path) -> None:
    flow = harness.flow(FLOW)
    harness.engine.store.save_flow(flow.digest, flow.name, flow.source)
    insert_held_runs(store_url, flow, COUNT)
    store = harness.engine.store

    claimed = await harness.run_due()
    await harness.run_until(T0 + timedelta(days=1) - timedelta(milliseconds=1))

    assert claimed == 0
    assert harness.engine.holds.runner.spawned == 0
    assert not log.exists()
    assert store.count_runs(status=RunStatus.HELD) == COUNT
    assert store.next_due_at() == T0 + timedelta(days=1)
    assert not harness.worker._in_flight  # the worker holds nothing for them


async def test_a_held_run_started_by_the_engine_is_due_at_its_after(harness: Harness) -> None:
    run = harness.engine.start(harness.flow(FLOW), target="acme/web#7")

    assert (run.status, run.due_at) == (RunStatus.HELD, T0 + timedelta(days=1))

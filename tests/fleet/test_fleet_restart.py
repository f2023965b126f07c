"""A fleet across database outages (SPEC 7 "Fleet"): while four ``tarry worker`` processes run
runs with waits, every connection they hold to the database is terminated by the server, three
times. Without anyone restarting them, the workers reconnect and every run completes, each
transition in its history exactly once.

Terminating the backends is what a server restart does to its clients; the server itself is
shared with other tests and is not restarted.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from pathlib import Path

import psycopg
import pytest
from fleet_support import (
    Fleet,
    action_problems,
    create_runs,
    journal_counts,
    recovered_runs,
    run_errors,
    run_inputs,
    status_counts,
    transition_counts,
    transition_problems,
    unfinished,
    wait_until,
    write_project,
)

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(120)]

RUNS = 1_000
WORKERS = 4
LONGEST_PAUSE = 6000
"""The runs' waits end between 0.5 s and this many milliseconds after their first step."""
OUTAGES = 3
OUTAGE_EVERY = 1.5
"""Seconds between two outages, the first counted from when every worker has started."""
SEED = 11


def terminate_connections(url: str) -> int:
    """End every other session on the database at ``url`` (as a restarting server would);
    how many were ended."""
    with psycopg.connect(url, autocommit=True) as connection:
        ended = connection.execute(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchone()
    assert ended is not None
    return int(ended[0])


def test_workers_reconnect_by_themselves_after_their_connections_are_terminated(
        tmp_path: Path, postgres_url: str) -> None:
    rng = random.Random(SEED)
    project = write_project(tmp_path / "project", postgres_url)
    run_ids = create_runs(project, [run_inputs(rng, answered=False, longest_pause=LONGEST_PAUSE)
                                    for _ in range(RUNS)])
    fleet = Fleet(project, ("--lease", "2", "--concurrency", "64"), tmp_path / "logs")
    ended: list[int] = []
    try:
        fleet.start(WORKERS)
        wait_until(lambda: True if all(w.started() for w in fleet.workers) else None,
                   seconds=30, what="every worker to start")
        for _ in range(OUTAGES):
            time.sleep(OUTAGE_EVERY)
            assert unfinished(postgres_url), "the runs ended before the outages were over"
            ended.append(terminate_connections(postgres_url))
        wait_until(lambda: None if unfinished(postgres_url) else True, seconds=60,
                   what="every run to end")
        assert fleet.alive(), fleet.log_text()
        assert fleet.stop() == [0] * WORKERS, fleet.log_text()
    finally:
        fleet.kill_all()

    assert min(ended) >= WORKERS, f"sessions ended per outage: {ended}"  # a listener each
    assert "store unavailable" in fleet.log_text(), "no worker call met a terminated connection"
    assert status_counts(postgres_url) == Counter({"succeeded": RUNS}), run_errors(postgres_url)
    counts = transition_counts(postgres_url)
    assert transition_problems(counts, run_ids, ())[:5] == []
    calls = journal_counts(project.journal)
    assert action_problems(calls, run_ids, recovered_runs(counts))[:5] == []

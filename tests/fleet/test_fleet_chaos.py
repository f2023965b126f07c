"""A short chaos run for every CI build (SPEC 3.3, 7): a few hundred runs, three ``tarry
worker`` processes on each store, a few SIGKILLs. Read back from the history, every transition
happened exactly once, every run ended as it should, and the user action ran again only for
runs a killed worker had in flight. (test_fleet_kill.py is the long PostgreSQL version.)"""

from __future__ import annotations

import random
import time
from collections import Counter
from pathlib import Path

import pytest
from fleet_support import (
    FLOW_NAME,
    Fleet,
    action_problems,
    journal_counts,
    recovered_runs,
    run_inputs,
    send_replies,
    store_reply_statuses,
    store_status_counts,
    store_transition_counts,
    transition_problems,
    wait_until,
    write_project,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

RUNS = 300
WORKERS = 3
KILLS = 3
ANSWERED_EVERY = 5
LONGEST_PAUSE = 2500
SEED = 11


def test_a_short_chaos_run_keeps_every_transition_exactly_once(tmp_path: Path,
                                                               store_url: str) -> None:
    rng = random.Random(SEED)
    project = write_project(tmp_path / "project", store_url)
    engine = project.engine()
    try:
        run_ids = [record.id for record in engine.start_many(FLOW_NAME, [
            run_inputs(rng, answered=index % ANSWERED_EVERY == 0, longest_pause=LONGEST_PAUSE)
            for index in range(RUNS)])]
        answered = run_ids[::ANSWERED_EVERY]
        fleet = Fleet(project, ("--lease", "2", "--concurrency", "32"), tmp_path / "logs")
        try:
            fleet.start(WORKERS)
            wait_until(lambda: True if all(w.started() for w in fleet.workers) else None,
                       seconds=60, what="the workers to start")
            send_replies(project, answered)
            for _ in range(KILLS):  # kill while runs are in flight, between their steps
                time.sleep(rng.uniform(0.3, 0.8))
                fleet.kill_one_and_replace(rng)
            wait_until(lambda: None if engine.store.next_due_at() else True, seconds=150,
                       what="every run to end")
            assert fleet.stop() == [0] * WORKERS, fleet.log_text()
        finally:
            fleet.kill_all()

        assert store_status_counts(engine, run_ids) == Counter({"succeeded": RUNS})
        counts = store_transition_counts(engine, run_ids)
        assert transition_problems(counts, run_ids, set(answered))[:5] == []
        statuses = store_reply_statuses(engine, run_ids)
        assert Counter(statuses[run_id] for run_id in answered) == {"received": len(answered)}
        assert Counter(statuses.values())["timeout"] == RUNS - len(answered)
        assert fleet.killed == KILLS
        recovered = recovered_runs(counts)
        assert action_problems(journal_counts(project.journal), run_ids, recovered)[:5] == []
    finally:
        engine.close()

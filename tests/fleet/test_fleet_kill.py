"""A fleet under SIGKILL (SPEC 7 "Fleet"): four ``tarry worker`` processes share one PostgreSQL
database while a chaos loop kills one every two to three seconds and starts another. Every run
still ends, every transition is in the history exactly once, and the user action ran again
only for runs a killed worker had in flight."""

from __future__ import annotations

import random
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fleet_support import (
    Fleet,
    action_problems,
    create_runs,
    journal_counts,
    recovered_runs,
    reply_statuses,
    run_errors,
    run_inputs,
    send_replies,
    status_counts,
    transition_counts,
    transition_problems,
    unfinished,
    wait_until,
    write_project,
)

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(300)]

RUNS = 4_000
"""Enough for two dozen kills while runs are in flight, and to end well within the time limit
with the other half of the suite running beside it on two cores."""
WORKERS = 4
ANSWERED_EVERY = 10
"""Every tenth run is sent its reply while the workers run; the others' ``wait_for`` times
out after a second."""
LONGEST_PAUSE = 4000
"""The runs' waits end between 0.5 s and this many milliseconds after their first step."""
KILL_EVERY = (2.0, 3.0)
"""Seconds between two kills, drawn uniformly."""
SEED = 7


class Chaos:
    """Called between two looks at the store: every few seconds it SIGKILLs a random worker
    of ``fleet`` and starts a replacement."""

    def __init__(self, fleet: Fleet, rng: random.Random) -> None:
        self.fleet = fleet
        self.rng = rng
        self.next_kill = time.monotonic() + rng.uniform(*KILL_EVERY)

    def __call__(self) -> None:
        time.sleep(0.2)
        if time.monotonic() >= self.next_kill:
            self.fleet.kill_one_and_replace(self.rng)
            self.next_kill = time.monotonic() + self.rng.uniform(*KILL_EVERY)


def test_a_fleet_killed_at_random_still_makes_every_transition_exactly_once(
        tmp_path: Path, postgres_url: str) -> None:
    rng = random.Random(SEED)
    project = write_project(tmp_path / "project", postgres_url)
    run_ids = create_runs(project, [
        run_inputs(rng, answered=index % ANSWERED_EVERY == 0, longest_pause=LONGEST_PAUSE)
        for index in range(RUNS)])
    answered = run_ids[::ANSWERED_EVERY]
    fleet = Fleet(project, ("--lease", "2", "--concurrency", "64"), tmp_path / "logs")
    try:
        fleet.start(WORKERS)
        with ThreadPoolExecutor(1) as sender:
            replies = sender.submit(send_replies, project, answered)
            wait_until(lambda: None if unfinished(postgres_url) else True, seconds=240,
                       what="every run to end", between=Chaos(fleet, rng),
                       explain=lambda: f"runs by status: {dict(status_counts(postgres_url))}")
            replies.result()
        assert fleet.alive(), fleet.log_text()
        assert fleet.stop() == [0] * WORKERS, fleet.log_text()
    finally:
        fleet.kill_all()

    assert status_counts(postgres_url) == Counter({"succeeded": RUNS}), run_errors(postgres_url)
    counts = transition_counts(postgres_url)
    assert transition_problems(counts, run_ids, set(answered))[:5] == []
    statuses = reply_statuses(postgres_url)
    assert Counter(statuses[run_id] for run_id in answered) == {"received": len(answered)}
    assert Counter(statuses.values())["timeout"] == RUNS - len(answered)
    recovered = recovered_runs(counts)
    assert fleet.killed >= 3
    assert recovered, "no kill caught a worker with runs in flight"
    assert action_problems(journal_counts(project.journal), run_ids, recovered)[:5] == []

"""Two ``tarry worker`` processes sharing one store never run more checks at once than
``check_slots`` allows — measured, not assumed.

Held runs fall due one after another (``--hold-after``, staggered); each check script appends
its start and end instants and its parent's pid (the worker process) to a file, sleeps, and
says go. Afterwards the file gives the largest number of checks that ran at the same time,
and which worker processes ran them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hold_support import script

from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.model import RunStatus

pytestmark = pytest.mark.slow

TARRY = Path(sys.executable).parent / "tarry"
RUNS = 24
STAGGER = timedelta(milliseconds=100)
CHECK_SECONDS = 0.25


def max_overlap(lines: list[str]) -> int:
    """The most checks running at one instant, from ``start|end <instant> <pid>`` lines."""
    events = sorted((float(instant), 1 if kind == "start" else -1)
                    for kind, instant, _pid in (line.split() for line in lines))
    running = most = 0
    for _instant, change in events:  # at equal instants an end (-1) sorts before a start
        running += change
        most = max(most, running)
    return most


def test_max_overlap_counts_concurrent_intervals() -> None:
    lines = ["start 1.0 7", "start 1.5 8", "end 2.0 7", "start 2.0 7", "end 3.0 8",
             "end 3.5 7"]
    assert max_overlap(lines) == 2


@pytest.fixture
def project(tmp_path: Path, store_url: str) -> Path:
    """A project on the test's store with one held flow."""
    root = tmp_path / "project"
    (root / "flows").mkdir(parents=True)
    (root / "tarry.toml").write_text(f"[tarry]\ndatabase = {json.dumps(store_url)}\n")
    (root / "flows" / "deploy.yaml").write_text(
        "flow: deploy\nhold:\n  - check: jira\nsteps:\n  - go: { log: started }\n")
    return root


@pytest.fixture
def workers(project: Path, tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Two worker processes of the project sharing one check slot; stopped afterwards."""
    log = tmp_path / "checks.log"
    check = script(tmp_path / "checks", "jira.sh",
                   f'echo "start $(date +%s.%N) $PPID" >> "{log}"\n'
                   f"sleep {CHECK_SECONDS}\n"
                   f'echo "end $(date +%s.%N) $PPID" >> "{log}"\nexit 0')
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("TARRY_")},
           "TARRY_CHECKS": f"jira:{check}", "TARRY_CHECK_SLOTS": "1"}
    processes = []
    for n in range(2):
        with (tmp_path / f"worker-{n}.log").open("wb") as output:
            # one slot each: a worker busy with a check leaves the next due run to the other
            processes.append(subprocess.Popen([str(TARRY), "worker", "--concurrency", "1"],
                                              cwd=project, env=env,
                                              stdout=subprocess.DEVNULL, stderr=output))
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()


def wait_for_workers(tmp_path: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        logs = [tmp_path / f"worker-{n}.log" for n in range(2)]
        if all(b" started on " in log.read_bytes() for log in logs if log.exists()) \
                and all(log.exists() for log in logs):
            return
        time.sleep(0.05)
    pytest.fail("the workers did not start within 30s")


def check_pids(log: Path) -> set[str]:
    """The worker processes that have started a check so far."""
    lines = log.read_text().splitlines() if log.exists() else []
    return {line.split()[2] for line in lines if line.startswith("start")}


def test_two_workers_never_run_more_checks_at_once_than_the_slots(
        project: Path, tmp_path: Path, workers: list[subprocess.Popen[bytes]]) -> None:
    wait_for_workers(tmp_path)
    settings = load_settings(cwd=project, env={"TARRY_CHECKS": "jira:/bin/true"})
    engine = Engine.from_settings(settings)
    log = tmp_path / "checks.log"
    runs: list[str] = []
    try:
        # Waves of staggered runs until both workers have run a check: which worker wins the
        # one slot is a race, so a single wave may all go to one of them on a loaded machine.
        deadline = time.monotonic() + 60
        while len(check_pids(log)) < 2 and time.monotonic() < deadline:
            first = datetime.now(UTC) + timedelta(milliseconds=300)
            runs += [engine.start("deploy", target=f"acme/web#{len(runs) + n}",
                                  hold_after=first + n * STAGGER).id for n in range(RUNS)]
            time.sleep((first - datetime.now(UTC)).total_seconds() + RUNS * 0.1 + 1.0)
        for process in workers:
            process.send_signal(signal.SIGTERM)
        assert [process.wait(timeout=15) for process in workers] == [0, 0]
        records = [engine.store.get_run(run) for run in runs]
    finally:
        engine.close()

    lines = log.read_text().splitlines()
    ran = [line for line in lines if line.startswith("start")]
    assert max_overlap(lines) == 1
    assert len(ran) >= 4
    assert len(check_pids(log)) == 2  # both worker processes ran checks
    assert sum(r.status is RunStatus.SUCCEEDED for r in records) == len(ran)
    assert any(r.state["hold"]["denials"] for r in records if r.status is RunStatus.HELD)

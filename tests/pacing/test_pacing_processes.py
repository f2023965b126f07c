"""Pacing holds across worker processes sharing one store, on the real clock: two ``tarry
worker`` processes never start more runs of a throttle key per period than its limit
(checked from the runs' history), and a debounced burst whose worker is SIGKILLed around
its fire instant still starts exactly one run, once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import TypeVar

import pytest

from tarry.clock import SystemClock, from_iso
from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.model import RunStatus

pytestmark = pytest.mark.slow

TARRY = Path(sys.executable).parent / "tarry"
T = TypeVar("T")
LIMIT, PER = 4, timedelta(seconds=1)
PACED = f"""\
flow: paced
inputs:
  customer: {{ type: string, required: true }}
throttle: {{ key: "{{{{ customer }}}}", limit: {LIMIT}, per: 1s }}
steps:
  - hello: {{ log: "hello {{{{ customer }}}}" }}
"""
BUILD = """\
flow: build
inputs:
  sha: { type: string, required: true }
on:
  - event: forge.push
    inputs: { sha: "{{ event.sha }}" }
    debounce: { key: "{{ event.repo }}", period: 1s }
steps:
  - built: { log: "built {{ sha }}" }
"""
EVENTS = "events:\n  forge.push:\n    correlate_on: [repo]\n"


@pytest.fixture
def engine(tmp_path: Path, store_url: str) -> Iterator[Engine]:
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "paced.yaml").write_text(PACED)
    (tmp_path / "flows" / "build.yaml").write_text(BUILD)
    (tmp_path / "events.yaml").write_text(EVENTS)
    (tmp_path / "tarry.toml").write_text(f'[tarry]\ndatabase = "{store_url}"\n')
    opened = Engine.from_settings(load_settings(tmp_path, {}))
    yield opened
    opened.close()


def worker(root: Path, *options: str) -> subprocess.Popen[bytes]:
    """A ``tarry worker`` process of the project at ``root``."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("TARRY_")}
    return subprocess.Popen([str(TARRY), "worker", *options], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_until(probe: Callable[[], T | None], seconds: float, what: str) -> T:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        answer = probe()
        if answer is not None:
            return answer
        time.sleep(0.05)
    pytest.fail(f"gave up after {seconds:.0f}s waiting for {what}")


def stop(*processes: subprocess.Popen[bytes]) -> None:
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        process.wait(timeout=30)


def ended(engine: Engine, flow: str, count: int) -> bool | None:
    runs = engine.store.list_runs(flow=flow, limit=1000)
    return True if len(runs) == count and all(r.status.is_terminal for r in runs) else None


def test_two_workers_never_start_more_than_the_limit_of_a_key_per_period(
        engine: Engine, tmp_path: Path) -> None:
    customers = ["acme", "globex"]
    engine.start_many("paced", [{"customer": customers[n % 2]} for n in range(24)])
    workers = [worker(tmp_path), worker(tmp_path)]
    try:
        wait_until(lambda: ended(engine, "paced", 24), 60, "every run to end")
    finally:
        stop(*workers)
    turns: dict[str, list[datetime]] = defaultdict(list)
    for run in engine.store.list_runs(flow="paced", limit=1000):
        assert run.status is RunStatus.SUCCEEDED
        history = engine.store.history(run.id)
        [taken] = [entry.data for entry in history if entry.kind == "throttle"]
        [started] = [entry.at for entry in history if entry.kind == "started"]
        assert started >= from_iso(taken["turn"])  # never before its turn
        turns[taken["key"]].append(from_iso(taken["turn"]))
    assert sorted(turns) == customers
    for key_turns in turns.values():
        ordered = sorted(key_turns)
        assert len(ordered) == 12
        # any LIMIT + 1 turns of a key span at least PER: no window of PER holds more
        assert all(ordered[n + LIMIT] - ordered[n] >= PER
                   for n in range(len(ordered) - LIMIT))
    assert ordered[-1] - ordered[0] >= 2 * PER  # 12 starts at 4 per second: 3 windows


@pytest.mark.parametrize("offset_ms", [-30, 0, 30])
def test_a_burst_whose_worker_is_killed_around_its_fire_instant_starts_one_run(
        engine: Engine, tmp_path: Path, offset_ms: int) -> None:
    first = worker(tmp_path, "--lease", "1")
    replacement = None
    try:
        for number in range(3):
            engine.send("forge.push", {"repo": "acme/web", "sha": f"sha{number}"})
        [run] = engine.store.list_runs(flow="build", limit=10)
        assert run.due_at is not None
        pause = (run.due_at - SystemClock().now()).total_seconds() + offset_ms / 1000
        time.sleep(max(pause, 0))
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        replacement = worker(tmp_path, "--lease", "1")
        wait_until(lambda: ended(engine, "build", 1), 30, "the build to end")
    finally:
        stop(first, *([replacement] if replacement else []))
    [done] = engine.store.list_runs(flow="build", limit=10)
    kinds = [entry.kind for entry in engine.store.history(done.id)]
    assert (done.status, done.inputs) == (RunStatus.SUCCEEDED, {"sha": "sha2"})
    assert kinds.count("succeeded") == 1
    assert kinds.count("debounced") == 2

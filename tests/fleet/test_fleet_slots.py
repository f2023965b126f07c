"""Slots under SIGKILL: real ``tarry worker`` processes (three on PostgreSQL, two on one
SQLite file) share runs of a flow with ``concurrency`` on a few keys of limit 2, and runs
whose ``limit:`` step calls an action through a pool of 2, while a worker is killed every
second or so and replaced. Every run still ends (none stays stuck in a queue), the history
never shows more than two runs of a key inside their steps at once, no more than two calls
that finished ever overlapped, and no slot or queue entry is left behind."""

from __future__ import annotations

import json
import random
import time
from collections import defaultdict
from pathlib import Path

import pytest
from fleet_support import Fleet, FleetProject, wait_until

from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.model import RunStatus
from tarry.store import open_store
from tarry.store.sqlstore import SqlStore

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

KEYS = 4
LIMIT = 2
RUNS = 100
SEED = 11
KILL_EVERY = (0.8, 1.5)

_FLOW = f"""\
flow: slotted
inputs:
  k: {{ type: string, required: true }}
  pause: {{ type: duration, required: true }}
concurrency: {{ key: "{{{{ k }}}}", limit: {LIMIT} }}
steps:
  - nap: {{ wait: {{ for: "{{{{ pause }}}}" }} }}
  - done: {{ log: {{ message: "{{{{ k }}}}" }} }}
"""


_POOLED = """\
flow: pooled
steps:
  - call: { paced: {}, limit: vendor }
"""

_ACTIONS = """\
import asyncio, os, time

CALLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.txt")


def _note(line):
    fd = os.open(CALLS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


async def paced(args, ctx):
    began = time.time_ns()
    await asyncio.sleep(0.1)
    _note(f"{ctx.run_id} {began} {time.time_ns()}\\n")
    return {}
"""
POOLED_RUNS = 30


def _project(root: Path, url: str) -> Path:
    root.mkdir(parents=True)
    (root / "tarry.toml").write_text(
        f"[tarry]\ndatabase = {json.dumps(url)}\n\n[actions]\npaced = \"fleet_paced:paced\"\n\n"
        f"[limits.pools]\nvendor = {LIMIT}\n", encoding="utf-8")
    (root / "flows").mkdir()
    (root / "flows" / "slotted.yaml").write_text(_FLOW, encoding="utf-8")
    (root / "flows" / "pooled.yaml").write_text(_POOLED, encoding="utf-8")
    (root / "fleet_paced.py").write_text(_ACTIONS, encoding="utf-8")
    return root


def _finished_calls(root: Path) -> list[tuple[int, int]]:
    """The (began, ended) nanoseconds of each call that finished (a killed one left no line)."""
    lines = (root / "calls.txt").read_text(encoding="utf-8").splitlines()
    return [(int(began), int(ended)) for _, began, ended in (line.split() for line in lines)]


def _engine(root: Path) -> Engine:
    return Engine.from_settings(load_settings(cwd=root, env={}))


def _holding_intervals(url: str) -> dict[str, list[tuple[int, int]]]:
    """Per key, each run's interval from its slot.taken entry to its end, from history."""
    store = open_store(url)
    assert isinstance(store, SqlStore)
    try:
        with store._transaction(write=False) as tx:
            tx.cursor.execute(
                "SELECT h.run_id, h.kind, h.at, r.inputs FROM history h "
                "JOIN runs r ON r.id = h.run_id WHERE r.flow = 'slotted' AND h.kind IN "
                "('slot.taken', 'succeeded', 'failed', 'cancelled') ORDER BY h.at")
            found = tx.cursor.fetchall()
    finally:
        store.close()
    taken: dict[str, int] = {}
    ended: dict[str, int] = {}
    keys: dict[str, str] = {}
    for row in found:
        run_id, kind, at = row["run_id"], row["kind"], int(row["at"])
        inputs = row["inputs"] if isinstance(row["inputs"], dict) else json.loads(row["inputs"])
        keys[run_id] = inputs["k"]
        if kind == "slot.taken":
            taken.setdefault(run_id, at)
        else:
            ended[run_id] = at
    intervals: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for run_id, start in taken.items():
        intervals[keys[run_id]].append((start, ended[run_id]))
    return intervals


def _most_at_once(intervals: list[tuple[int, int]]) -> int:
    """The most intervals open at one instant (an end at t frees its slot before a start at
    t: the hand-over happens in the transaction that ends the holder)."""
    edges = sorted([(end, -1) for _, end in intervals] + [(start, 1) for start, _ in intervals])
    most = inside = 0
    for _, step in edges:
        inside += step
        most = max(most, inside)
    return most


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres",
                                                            marks=pytest.mark.postgres)])
def test_killed_workers_never_put_a_key_over_its_limit_nor_leave_a_run_queued(
        backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    url = (f"sqlite:///{tmp_path / 'slots.db'}" if backend == "sqlite"
           else request.getfixturevalue("postgres_url"))
    root = _project(tmp_path / "project", url)
    rng = random.Random(SEED)
    engine = _engine(root)
    try:
        run_ids = [engine.start("slotted", {"k": f"key-{index % KEYS}",
                                            "pause": f"{rng.randrange(50, 250)}ms"}).id
                   for index in range(RUNS)]
        for _ in range(POOLED_RUNS):
            engine.start("pooled")
    finally:
        engine.close()
    workers = 2 if backend == "sqlite" else 3
    fleet = Fleet(FleetProject(root, url), ("--lease", "2", "--concurrency", "16"),
                  tmp_path / "logs")
    next_kill = [0.0]

    def chaos() -> None:
        time.sleep(0.2)
        if time.monotonic() >= next_kill[0]:
            if next_kill[0]:
                fleet.kill_one_and_replace(rng)
            next_kill[0] = time.monotonic() + rng.uniform(*KILL_EVERY)

    def statuses() -> dict[RunStatus, int]:
        store = open_store(url)
        try:
            return store.count_runs_per_status()
        finally:
            store.close()

    try:
        fleet.start(workers)
        wait_until(lambda: True if statuses().get(RunStatus.SUCCEEDED, 0) == RUNS + POOLED_RUNS
                   else None,
                   seconds=90, what="every run to end", between=chaos,
                   explain=lambda: f"runs by status: {statuses()}; killed {fleet.killed}\n"
                                   f"{fleet.log_text()[-3000:]}")
    finally:
        fleet.kill_all()
    assert fleet.killed >= 2
    intervals = _holding_intervals(url)
    assert sum(len(each) for each in intervals.values()) == len(run_ids)
    assert {key: _most_at_once(each) for key, each in intervals.items()} == {
        f"key-{index}": LIMIT for index in range(KEYS)}
    store = open_store(url)
    assert isinstance(store, SqlStore)
    try:
        with store._transaction(write=False) as tx:
            tx.cursor.execute("SELECT (SELECT count(*) FROM slot_holders) AS held, "
                              "(SELECT count(*) FROM slot_queue) AS queued")
            left = tx.cursor.fetchall()[0]
    finally:
        store.close()
    assert (left["held"], left["queued"]) == (0, 0)
    calls = _finished_calls(root)
    assert len(calls) >= POOLED_RUNS
    assert _most_at_once(calls) <= LIMIT

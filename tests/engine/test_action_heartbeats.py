"""Heartbeats and attempts on the real clock, on both stores: an action that heartbeats runs
through many short leases beside a second worker, which never takes its run over (one
execution); one that stops heartbeating is ended after a lease's silence; and a run whose
``tarry worker`` was SIGKILLed mid-action is re-run by the next worker as attempt 2."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext, ActionFunction, ActionRegistry
from tarry.clock import SystemClock
from tarry.config import load_settings
from tarry.engine.builtins import register_builtins
from tarry.engine.catalog import FlowCatalog
from tarry.engine.runtime import Engine
from tarry.language.loader import parse_flow
from tarry.model import RunStatus
from tarry.store import open_store

pytestmark = pytest.mark.slow

TARRY = Path(sys.executable).parent / "tarry"
LEASE = timedelta(seconds=1)  # short, yet long beside a busy machine's pauses
FLOW = """
flow: long
steps:
  - call:
      long: {}
      timeout: 1m
"""


def _engine(store_url: str, directory: Path, action: ActionFunction) -> Engine:
    registry = ActionRegistry()
    register_builtins(registry)
    registry.register("long", action)
    store = open_store(store_url)
    return Engine(store, FlowCatalog(directory, store, registry.names()), registry,
                  SystemClock())


async def _run_two_workers(engines: list[Engine], until: Callable[[], bool]) -> None:
    workers = [engine.worker(concurrency=2, lease=LEASE) for engine in engines]
    stop = asyncio.Event()
    tasks = [asyncio.create_task(worker.run(stop)) for worker in workers]
    deadline = time.monotonic() + 60
    try:
        while not until() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    finally:
        stop.set()
        await asyncio.gather(*tasks)


async def test_a_heartbeating_action_keeps_its_run_through_many_leases_beside_another_worker(
        tmp_path: Path, store_url: str) -> None:
    calls: list[tuple[str, int]] = []

    def long(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        calls.append((ctx.run_id, ctx.attempt))
        for beat in range(40):  # 4 s: four leases, a heartbeat every tenth of one
            time.sleep(0.1)
            ctx.heartbeat({"beat": beat})
        return {"beats": 40}

    engines = [_engine(store_url, tmp_path, long) for _ in range(2)]
    try:
        run_id = engines[0].start(parse_flow(FLOW, "long.yaml", actions={"long"})).id
        await _run_two_workers(engines, lambda: engines[0].get(run_id).status.is_terminal)
        record = engines[0].get(run_id)
        assert record.status is RunStatus.SUCCEEDED, (record.error,
                                                      engines[0].store.history(run_id))
        assert calls == [(run_id, 1)]  # neither a takeover nor the silence rule ran it again
        kinds = [entry.kind for entry in engines[0].store.history(run_id)]
        assert "recovered" not in kinds
    finally:
        for engine in engines:
            engine.close()


async def test_an_action_that_stops_heartbeating_is_ended_after_a_lease(
        tmp_path: Path, store_url: str) -> None:
    began: list[float] = []

    def long(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        began.append(time.monotonic())
        ctx.heartbeat("starting")
        time.sleep(8)  # silent for eight leases; its timeout is a minute
        return {}

    engines = [_engine(store_url, tmp_path, long)]
    try:
        run_id = engines[0].start(parse_flow(FLOW, "long.yaml", actions={"long"})).id
        await _run_two_workers(engines, lambda: engines[0].get(run_id).status.is_terminal)
        ended = time.monotonic()
        record = engines[0].get(run_id)
        assert record.error == {"type": "timeout", "step": "call", "message": (
            "the action sent no heartbeat for 1s (the worker's lease) after its last one; "
            'last heartbeat: "starting"')}
        assert ended - began[0] < 7  # ended after a lease, not when the thread returned
    finally:
        for engine in engines:
            engine.close()


ACTIONS = '''\
"""An action that hangs on its first attempt, and records every attempt."""

import json
import os
import time


def slow(args, ctx):
    with open(os.path.join(os.path.dirname(__file__), "attempts.log"), "a") as log:
        log.write(json.dumps(ctx.attempt) + "\\n")
    if ctx.attempt == 1:
        time.sleep(120)  # the worker is killed meanwhile
    return {"attempt": ctx.attempt}
'''


@pytest.fixture
def project(tmp_path: Path, store_url: str) -> Path:
    (tmp_path / "tarry.toml").write_text(
        f'[tarry]\ndatabase = {json.dumps(store_url)}\n\n[actions]\nslow = "slow_actions:slow"\n',
        encoding="utf-8")
    (tmp_path / "slow_actions.py").write_text(ACTIONS, encoding="utf-8")
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "slow.yaml").write_text(
        "flow: slow\nsteps:\n  - call:\n      slow: {}\n", encoding="utf-8")
    return tmp_path


def _spawn(root: Path) -> subprocess.Popen[bytes]:
    env = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    with (root / "tarry.log").open("ab") as log:
        return subprocess.Popen([str(TARRY), "worker", "--lease", "1"], cwd=root, env=env,
                                stdout=log, stderr=subprocess.STDOUT)


def _until(condition: Callable[[], bool], what: str, root: Path) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}; "
                        + (root / "tarry.log").read_text(errors="replace"))
        time.sleep(0.1)


def test_a_run_whose_worker_was_killed_mid_action_is_re_run_as_attempt_two(
        project: Path) -> None:
    engine = Engine.from_settings(load_settings(cwd=project, env={}))
    log = project / "attempts.log"
    try:
        run_id = engine.start("slow").id
        first = _spawn(project)
        try:
            _until(lambda: log.exists() and log.read_text() == "1\n", "the first attempt",
                   project)
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=20)
        second = _spawn(project)
        try:
            _until(lambda: engine.get(run_id).status.is_terminal, "the re-run", project)
        finally:
            second.send_signal(signal.SIGINT)
            second.wait(timeout=20)
        record = engine.get(run_id)
        assert record.status is RunStatus.SUCCEEDED, record.error
        assert log.read_text() == "1\n2\n"
        assert engine.document(run_id)["bindings"]["call"] == {"attempt": 2}
        kinds = [entry.kind for entry in engine.store.history(run_id)]
        assert kinds.count("recovered") == 1
    finally:
        engine.close()

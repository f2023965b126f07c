"""Hostile actions in real ``tarry worker`` and ``tarry serve`` processes, on both stores:
20 good runs beside each hostile one finish and the hostile run fails once with a clear error.
An action's ``SystemExit``, ``KeyboardInterrupt`` or bare ``BaseException`` leaves the process
running (and SIGINT / SIGTERM still stop it cleanly); an action that ends its process anyway
(``os._exit``) kills one worker per takeover until, after ``recovery_max`` (3) takeovers, the
run is failed as crashed."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.model import RunStatus

pytestmark = pytest.mark.slow

TARRY = Path(sys.executable).parent / "tarry"
ACTIONS = '''\
"""Hostile actions, and a good one."""

import os
import sys


class Odd(BaseException):
    """Outside Exception's hierarchy."""


def usage(args, ctx):
    sys.exit(2)  # what argparse and click do on a usage error


def interrupt(args, ctx):
    raise KeyboardInterrupt("stop")


def odd(args, ctx):
    raise Odd("odd")


def die(args, ctx):
    os._exit(3)


def fine(args, ctx):
    return {"ok": True}
'''
HOSTILE = {"usage": "SystemExit: 2", "interrupt": "KeyboardInterrupt: stop", "odd": "Odd: odd"}
GOOD_RUNS = 20


@dataclass(frozen=True)
class Project:
    """A project whose actions module holds the hostile actions; one flow per action."""

    root: Path

    def engine(self) -> Engine:
        """An engine of the project in this process."""
        return Engine.from_settings(load_settings(cwd=self.root, env={}))

    def spawn(self, *args: str) -> subprocess.Popen[bytes]:
        """``tarry ARGS`` in the project, its output in ``tarry.log``."""
        env = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
        with (self.root / "tarry.log").open("ab") as log:
            return subprocess.Popen([str(TARRY), *args], cwd=self.root, env=env, stdout=log,
                                    stderr=subprocess.STDOUT)

    def log(self) -> str:
        """What the processes printed."""
        return (self.root / "tarry.log").read_text(encoding="utf-8", errors="replace")


@pytest.fixture
def project(tmp_path: Path, store_url: str) -> Project:
    names = ["fine", "die", *HOSTILE]
    (tmp_path / "tarry.toml").write_text(
        f"[tarry]\ndatabase = {json.dumps(store_url)}\n\n[actions]\n"
        + "".join(f'{name} = "hostile_actions:{name}"\n' for name in names), encoding="utf-8")
    (tmp_path / "hostile_actions.py").write_text(ACTIONS, encoding="utf-8")
    (tmp_path / "flows").mkdir()
    for name in names:
        (tmp_path / "flows" / f"{name}.yaml").write_text(
            f"flow: {name}\nsteps:\n  - call:\n      {name}: {{}}\n", encoding="utf-8")
    return Project(tmp_path)


@pytest.fixture
def engine(project: Project) -> Iterator[Engine]:
    opened = project.engine()
    yield opened
    opened.close()


def _until(condition: Callable[[], Any], seconds: float, what: str,
           explain: Callable[[], str] = lambda: "") -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}; {explain()}")
        time.sleep(0.1)


def _ended(engine: Engine, run_ids: list[str]) -> bool:
    return all(engine.get(run).status.is_terminal for run in run_ids)


def _stopped(process: subprocess.Popen[bytes], signum: int) -> int:
    process.send_signal(signum)
    return process.wait(timeout=20)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.mark.parametrize(("command", "stop"), [
    (("worker", "--lease", "2"), signal.SIGINT),
    (("serve", "--port", "PORT"), signal.SIGTERM),
], ids=["worker", "serve"])
def test_a_process_carries_on_past_an_action_raising_any_exception(
        project: Project, engine: Engine, command: tuple[str, ...], stop: int) -> None:
    good = [engine.start("fine").id for _ in range(GOOD_RUNS)]
    hostile = {engine.start(name).id: message for name, message in HOSTILE.items()}
    process = project.spawn(*(str(_free_port()) if part == "PORT" else part
                              for part in command))
    try:
        _until(lambda: _ended(engine, [*good, *hostile]) or process.poll() is not None, 60,
               "every run to end", project.log)
        assert process.poll() is None, project.log()  # it carries on
        assert {engine.get(run).status for run in good} == {RunStatus.SUCCEEDED}
        for run_id, message in hostile.items():
            assert engine.get(run_id).error == {"type": "action-error", "step": "call",
                                                "message": message}
            kinds = [entry.kind for entry in engine.store.history(run_id)]
            assert (kinds.count("step.failed"), kinds.count("failed")) == (1, 1)
    finally:
        code = _stopped(process, stop) if process.poll() is None else process.returncode
    assert code == 0, project.log()  # the real signal still stops it, cleanly


def test_a_run_that_kills_every_worker_is_failed_as_crashed_after_three_takeovers(
        project: Project, engine: Engine) -> None:
    good = [engine.start("fine").id for _ in range(GOOD_RUNS)]
    killer = engine.start("die").id
    deaths = 0
    process = project.spawn("worker", "--lease", "1", "--concurrency", "4")
    try:
        deadline = time.monotonic() + 90
        while not _ended(engine, [*good, killer]):
            assert time.monotonic() < deadline, project.log()
            if process.poll() is not None:
                assert process.returncode == 3, project.log()
                deaths += 1
                process = project.spawn("worker", "--lease", "1", "--concurrency", "4")
            time.sleep(0.1)
        assert process.poll() is None, project.log()
    finally:
        if process.poll() is None:
            assert _stopped(process, signal.SIGTERM) == 0, project.log()
    assert deaths == 4  # its first execution, then three takeovers
    assert engine.get(killer).error == {
        "type": "crashed", "step": None,
        "message": "the worker running it stopped 4 times in a row before its next checkpoint "
                   "(a crash, os._exit or a kill); after 3 recoveries ([limits] recovery_max) "
                   "it is not run again"}
    assert {engine.get(run).status for run in good} == {RunStatus.SUCCEEDED}

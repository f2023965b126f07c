"""The real ``tarry`` executable in real processes: a wait holds no process, a worker wakes the
run at its instant, SIGTERM stops a worker gracefully, and SIGKILL loses no run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tarry.clock import from_iso
from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.model import RunStatus
from tarry.store import open_store

pytestmark = pytest.mark.slow

TARRY = Path(sys.executable).parent / "tarry"
T = TypeVar("T")

NAP_FLOW = """\
flow: nap
steps:
  - nap:
      wait: { for: 2s }
  - after:
      set: { ok: true }
"""

SCRIBE_MODULE = """\
import time


def append(args, ctx):
    time.sleep(0.05)
    with open(args["file"], "a", encoding="utf-8") as out:
        out.write(args["line"] + "\\n")
"""

RELAY_FLOW = """\
flow: relay
steps:
  - first:
      append: {{ file: {log}, line: "{{{{ run.id }}}} first" }}
  - pause:
      wait: {{ for: 1s }}
  - second:
      append: {{ file: {log}, line: "{{{{ run.id }}}} second" }}
"""


def write_project(root: Path, *, config: str = "", flows: dict[str, str]) -> None:
    (root / "tarry.toml").write_text(config, encoding="utf-8")
    (root / "flows").mkdir()
    for name, text in flows.items():
        (root / "flows" / f"{name}.yaml").write_text(text, encoding="utf-8")


def environment(root: Path) -> dict[str, str]:
    """This process's environment (TARRY_* already scrubbed) with the project importable, and
    without the ``COLUMNS`` pytest-xdist sets (output to a pipe is then laid out wide)."""
    inherited = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    return {**inherited, "PYTHONPATH": str(root)}


def tarry(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(TARRY), *args], cwd=root, env=environment(root),
                          capture_output=True, text=True, timeout=10, check=False)


def show(root: Path, run_id: str) -> dict[str, Any]:
    result = tarry(root, "show", run_id, "--json")
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


@contextmanager
def worker(root: Path, *args: str) -> Iterator[subprocess.Popen[str]]:
    """A ``tarry worker`` process; killed on the way out if the test left it running."""
    process = subprocess.Popen([str(TARRY), "worker", *args], cwd=root, env=environment(root),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=5)


def wait_for(probe: Callable[[], T | None], *, seconds: float, what: str) -> T:
    """Poll ``probe`` until it answers (not None) or the deadline passes."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        answer = probe()
        if answer is not None:
            return answer
        time.sleep(0.1)
    pytest.fail(f"gave up after {seconds}s waiting for {what}")


def processes_in(folder: Path) -> list[int]:
    """The ids of the processes whose working directory is ``folder``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and Path(os.readlink(entry / "cwd")) == folder:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def stop_gracefully(process: subprocess.Popen[str]) -> str:
    """SIGTERM the worker; its exit code must be 0. Returns what it logged."""
    process.send_signal(signal.SIGTERM)
    _, log = process.communicate(timeout=5)
    assert process.returncode == 0, log
    return log


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs /proc")
def test_a_waiting_run_holds_no_process_and_a_worker_wakes_it_at_its_instant(
        tmp_path: Path) -> None:
    root = tmp_path.resolve()
    write_project(root, flows={"nap": NAP_FLOW})
    started = tarry(root, "run", "nap", "--json")
    assert started.returncode == 0, started.stderr
    run = json.loads(started.stdout)
    assert run["status"] == "waiting"
    assert processes_in(root) == []

    with worker(root) as process:
        done = wait_for(lambda: d if (d := show(root, run["id"]))["status"] != "waiting"
                        and d["status"] != "running" else None, seconds=30, what="the wake")
        log = stop_gracefully(process)

    assert done["status"] == "succeeded"
    until = from_iso(run["waiting_for"]["until"])
    woke = next(e for e in done["history"]
                if e["kind"] == "step.completed" and e["step"] == "nap")
    assert until <= from_iso(woke["at"])  # never early; how late is bench/timers.py's to say
    assert f"started on sqlite:///{root}/.tarry/tarry.db" in log
    assert log.rstrip().endswith("stopped")
    timeline = _timeline(tarry(root, "show", run["id"]).stdout)
    assert f'wait.registered  nap  kind="timer"  until="{run["waiting_for"]["until"]}"' in timeline
    assert f"{woke['at']}  resumed" in timeline


def _timeline(show_output: str) -> str:
    """The history table of ``tarry show`` with each row's cells joined like progress lines."""
    rows = []
    for line in show_output[show_output.index("history"):].splitlines():
        cells = line.split()
        if len(cells) >= 2 and cells[0][:4].isdigit():
            rows.append("  ".join(cells))
    return "\n".join(rows)


def test_a_killed_worker_loses_no_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path.resolve()
    log = root / "lines.txt"
    write_project(root, config='[actions]\nappend = "scribe:append"\n',
                  flows={"relay": RELAY_FLOW.format(log=json.dumps(str(log)))})
    (root / "scribe.py").write_text(SCRIBE_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))
    run_ids = start_runs(root, "relay", 50)

    with worker(root, "--lease", "1", "--concurrency", "8") as first:
        wait_for(lambda: True if _lines(log) >= 15 else None, seconds=8,
                 what="the first worker to get going")
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=5)
    assert _lines(log) < 100, "the first worker finished everything before it was killed"

    with worker(root, "--lease", "1") as second:
        wait_for(lambda: True if succeeded(root) == 50 else None, seconds=12,
                 what="every run to succeed")
        stop_gracefully(second)

    written = set(log.read_text(encoding="utf-8").splitlines())
    assert written == {f"{run_id} {step}" for run_id in run_ids for step in ("first", "second")}
    assert recovered(root, run_ids), "no run was taken over from the killed worker"


def start_runs(root: Path, flow: str, count: int) -> list[str]:
    engine = Engine.from_settings(load_settings(cwd=root, env={}))
    try:
        return [engine.start(flow).id for _ in range(count)]
    finally:
        engine.close()


def succeeded(root: Path) -> int:
    store = open_store(load_settings(cwd=root, env={}).database)
    try:
        return len(store.list_runs(status=RunStatus.SUCCEEDED, limit=1000))
    finally:
        store.close()


def recovered(root: Path, run_ids: list[str]) -> list[str]:
    """The runs whose history shows a takeover after a lapsed lease."""
    store = open_store(load_settings(cwd=root, env={}).database)
    try:
        return [run_id for run_id in run_ids
                if any(entry.kind == "recovered" for entry in store.history(run_id))]
    finally:
        store.close()


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def test_a_worker_freezes_its_start_up_heap_before_it_works(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    write_project(root, flows={"nap": NAP_FLOW})
    log = root / "worker.log"
    with log.open("w") as sink:
        process = subprocess.Popen([str(TARRY), "--debug", "worker"], cwd=root,
                                   env=environment(root), stderr=sink, text=True)
        try:
            wait_for(lambda: "objects of the start-up heap frozen" in log.read_text() or None,
                     seconds=30, what="the frozen heap")
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=10) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    frozen = next(line for line in log.read_text().splitlines() if "heap frozen" in line)
    assert int(frozen.split("tarry.worker: ")[1].split()[0]) > 10_000

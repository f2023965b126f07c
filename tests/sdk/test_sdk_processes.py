"""Python flows in real ``tarry worker`` processes: a condition's state survives a worker
killed between attempts, and another worker goes on from the recorded attempt."""

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

from tarry.model import RunRecord, RunStatus
from tarry.store import open_store

pytestmark = pytest.mark.slow

TARRY = Path(sys.executable).parent / "tarry"
T = TypeVar("T")

POLLING_MODULE = """\
import json
import os
from pathlib import Path

from tarry import App, CheckContext, Context, WaitStrategy

app = App()
ATTEMPTS = Path(__file__).with_name("attempts.jsonl")


def poll(state: int, check: CheckContext) -> int:
    with ATTEMPTS.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"attempt": check.attempt, "state": state,
                              "pid": os.getpid()}) + "\\n")
    return state + 1


@app.flow("settle")
async def settle(ctx: Context) -> int:
    return await ctx.wait_for_condition(
        "settled", check=poll, initial_state=0,
        strategy=WaitStrategy.fixed("1s", max_attempts=10, is_done=lambda state: state >= 4))
"""


@contextmanager
def worker(root: Path) -> Iterator[subprocess.Popen[str]]:
    """A ``tarry worker`` in ``root``; killed on the way out if still running."""
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("COLUMNS", "PYTHONPATH")}
    process = subprocess.Popen([str(TARRY), "worker"], cwd=root, env=environment,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=5)


def wait_for(probe: Callable[[], T | None], *, seconds: float, what: str) -> T:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        answer = probe()
        if answer is not None:
            return answer
        time.sleep(0.02)
    pytest.fail(f"gave up after {seconds}s waiting for {what}")


def run_of(store_url: str, run_id: str) -> RunRecord:
    store = open_store(store_url)
    try:
        return store.get_run(run_id)
    finally:
        store.close()


def attempt_recorded(store_url: str, run_id: str, attempt: int) -> bool | None:
    """True once the run waits with ``attempt`` checks recorded."""
    record = run_of(store_url, run_id)
    ops = record.state.get("journal", {}).get("ops", {})
    recorded = ops.get("settled", {}).get("attempt")
    return True if record.status is RunStatus.WAITING and recorded == attempt else None


def test_a_conditions_state_survives_a_worker_killed_between_attempts(
        tmp_path: Path, store_url: str) -> None:
    root = tmp_path.resolve()
    (root / "settling.py").write_text(POLLING_MODULE, encoding="utf-8")
    (root / "tarry.toml").write_text(f'[tarry]\ndatabase = "{store_url}"\napp = "settling:app"\n',
                                     encoding="utf-8")
    started = subprocess.run([str(TARRY), "start", "settle"], cwd=root, capture_output=True,
                             text=True, timeout=20, check=False)
    assert started.returncode == 0, started.stderr
    run_id = started.stdout.strip()

    with worker(root) as first:
        wait_for(lambda: attempt_recorded(store_url, run_id, 2), seconds=10,
                 what="two attempts recorded")
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=5)
    with worker(root) as second:
        done = wait_for(lambda: r if (r := run_of(store_url, run_id)).status.is_terminal
                        else None, seconds=15, what="the run to end")
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=5) == 0

    assert (done.status, done.result) == (RunStatus.SUCCEEDED, 4)
    attempts: list[dict[str, Any]] = [
        json.loads(line) for line in (root / "attempts.jsonl").read_text().splitlines()]
    assert [(a["attempt"], a["state"]) for a in attempts] == [(1, 0), (2, 1), (3, 2), (4, 3)]
    assert attempts[0]["pid"] == attempts[1]["pid"] == first.pid
    assert attempts[2]["pid"] == attempts[3]["pid"] == second.pid

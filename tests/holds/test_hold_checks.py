"""The check contract with real executables: argv, stdin, exit codes, signals, timeouts."""

from __future__ import annotations

import asyncio
import signal
from datetime import timedelta
from pathlib import Path

import pytest
from hold_support import script

from tarry.holds.checks import Answer, CheckRunner, answer_for

pytestmark = pytest.mark.slow

FAST = CheckRunner(timeout=timedelta(seconds=5), grace=timedelta(seconds=1))


@pytest.mark.parametrize(("code", "answer"), [
    (0, Answer.GO), (3, Answer.NOT_YET), (2, Answer.NEVER), (1, Answer.UNKNOWN),
    (4, Answer.UNKNOWN), (127, Answer.UNKNOWN), (255, Answer.UNKNOWN)])
async def test_each_exit_code_gives_its_answer(tmp_path: Path, code: int,
                                               answer: Answer) -> None:
    check = script(tmp_path, "check.sh", f"exit {code}")

    result = await FAST.run("jira", check, "acme/web#7")

    assert (result.check, result.answer, result.exit) == ("jira", answer, code)
    assert (result.signal, result.timed_out, result.spawn_error) == (None, False, None)


def test_no_exit_code_means_could_not_tell() -> None:
    assert answer_for(None) is Answer.UNKNOWN


async def test_the_check_gets_exactly_one_argument_never_through_a_shell(tmp_path: Path) -> None:
    seen = tmp_path / "argv.txt"
    check = script(tmp_path, "check.sh", f'printf "%s|%s" "$#" "$1" > "{seen}"; exit 0')
    target = 'acme/web#7; touch "$HOME/pwned" $(id)'

    await FAST.run("jira", check, target)

    assert seen.read_text() == f"1|{target}"


async def test_stdin_is_empty_so_a_prompting_check_ends_at_once(tmp_path: Path) -> None:
    check = script(tmp_path, "check.sh", "read answer && exit 0; exit 3")

    result = await FAST.run("jira", check, "t")

    assert result.answer is Answer.NOT_YET  # read hit end-of-file, not a terminal
    assert result.duration_ms < 2000


async def test_output_is_counted_never_kept(tmp_path: Path) -> None:
    check = script(tmp_path, "check.sh",
                   "head -c 300000 /dev/zero; printf 'token=hunter2' >&2; exit 0")

    result = await FAST.run("jira", check, "t")

    assert (result.stdout_bytes, result.stderr_bytes) == (300000, 13)
    assert "hunter2" not in repr(result)


async def test_a_check_that_kills_itself_is_a_fault(tmp_path: Path) -> None:
    check = script(tmp_path, "check.sh", "kill -SEGV $$")

    result = await FAST.run("jira", check, "t")

    assert (result.answer, result.exit, result.signal) == (
        Answer.UNKNOWN, None, signal.SIGSEGV)
    assert result.history_data()["signal"] == signal.SIGSEGV


async def test_a_check_past_its_timeout_is_terminated(tmp_path: Path) -> None:
    runner = CheckRunner(timeout=timedelta(milliseconds=200), grace=timedelta(seconds=2))
    check = script(tmp_path, "check.sh", "exec sleep 10")

    result = await runner.run("jira", check, "t")

    assert (result.answer, result.exit, result.signal, result.timed_out) == (
        Answer.UNKNOWN, None, signal.SIGTERM, True)
    assert result.duration_ms < 2000


async def test_a_check_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    runner = CheckRunner(timeout=timedelta(milliseconds=200),
                         grace=timedelta(milliseconds=300))
    check = script(tmp_path, "check.sh", "trap '' TERM; while :; do sleep 0.05; done")

    result = await runner.run("jira", check, "t")

    assert (result.answer, result.signal, result.timed_out) == (
        Answer.UNKNOWN, signal.SIGKILL, True)
    assert 500 <= result.duration_ms < 3000


async def test_a_grandchild_holding_the_pipes_does_not_hold_the_answer(tmp_path: Path) -> None:
    runner = CheckRunner(timeout=timedelta(seconds=5), grace=timedelta(milliseconds=200))
    check = script(tmp_path, "check.sh", "sleep 2 & exit 0")

    result = await runner.run("jira", check, "t")

    assert result.answer is Answer.GO
    assert result.duration_ms < 1500


@pytest.mark.parametrize(("prepare", "reason"), [
    ("missing", "No such file or directory"),
    ("not executable", "Permission denied"),
])
async def test_a_check_that_cannot_be_started_is_a_fault(tmp_path: Path, prepare: str,
                                                        reason: str) -> None:
    path = tmp_path / "check.sh"
    if prepare == "not executable":
        path.write_text("#!/bin/sh\nexit 0\n")
    runner = CheckRunner(timeout=timedelta(seconds=5))

    result = await runner.run("jira", path, "t")

    assert (result.answer, result.exit, result.spawn_error) == (Answer.UNKNOWN, None, reason)
    assert runner.spawned == 0


async def test_the_runner_counts_what_it_spawned(tmp_path: Path) -> None:
    runner = CheckRunner(timeout=timedelta(seconds=5))
    check = script(tmp_path, "check.sh", "exit 3")

    for _ in range(3):
        await runner.run("jira", check, "t")

    assert runner.spawned == 3


async def test_the_history_data_holds_counts_and_the_name_only(tmp_path: Path) -> None:
    check = script(tmp_path, "check.sh", "echo hello; exit 3")

    result = await FAST.run("jira", check, "t")

    assert result.history_data() == {
        "check": "jira", "outcome": "not_yet", "exit": 3, "duration_ms": result.duration_ms,
        "stdout_bytes": 6, "stderr_bytes": 0}


async def test_a_check_cut_short_by_its_steps_timeout_leaves_no_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    check = script(tmp_path, "check.sh", f"echo $$ > {pid_file}; exec sleep 10")
    running = asyncio.ensure_future(FAST.run("jira", check, "t"))
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.01)
    pid = int(pid_file.read_text())
    running.cancel()  # what a step's timeout does to the check action's call
    with pytest.raises(asyncio.CancelledError):
        await running
    for _ in range(200):
        if not _alive(pid):
            break
        await asyncio.sleep(0.01)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"

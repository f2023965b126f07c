"""Running one check: an operator's executable asked "may this run start yet?".

The contract (SPEC section 5): the path is executed directly (an argv array, never a shell)
with one argument, the run's target (or its id); stdin is ``/dev/null``, so a script that
prompts gets end-of-file at once; stdout and stderr are read, counted and thrown away — the
byte counts and the check's *name* are all that is ever logged or stored, never the output and
never the path. The exit code is the answer:

=====  ==========  ================================================
exit   answer      effect
=====  ==========  ================================================
0      ``go``      the condition is clear
3      ``not_yet`` held, asked again later; not a fault
2      ``never``   the run is refused (``hold-refused``)
other  ``unknown`` could not tell: a fault (so are a crash, a signal,
                   a timeout, and a path that cannot be executed)
=====  ==========  ================================================

A check that outlives its timeout gets SIGTERM, then SIGKILL after a grace period. Only the
process the runner started is signalled: a grandchild it left behind is its own affair.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_GRACE", "Answer", "CheckResult", "CheckRunner", "answer_for",
           "is_executable_file"]

logger = logging.getLogger("tarry.holds")

DEFAULT_GRACE = timedelta(seconds=2)
"""How long a check has between SIGTERM and SIGKILL."""

_CHUNK = 65536


class Answer(StrEnum):
    """What a check said."""

    GO = "go"
    NOT_YET = "not_yet"
    NEVER = "never"
    UNKNOWN = "unknown"
    """Could not tell: an exit code outside the contract, a crash, a timeout."""


_ANSWERS = {0: Answer.GO, 3: Answer.NOT_YET, 2: Answer.NEVER}


def answer_for(exit_code: int | None) -> Answer:
    """The answer an exit code gives (``None``: the check did not exit by itself)."""
    return _ANSWERS.get(exit_code, Answer.UNKNOWN) if exit_code is not None else Answer.UNKNOWN


@dataclass(frozen=True)
class CheckResult:
    """One run of one check: its answer and what is known about it besides the output."""

    check: str
    answer: Answer
    exit: int | None
    """The exit code; ``None`` when killed by a signal, timed out or never started."""
    duration_ms: int
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    signal: int | None = None
    """The signal that ended the process, if one did."""
    timed_out: bool = False
    spawn_error: str | None = None
    """Why the executable could not be started (the system's words, never the path)."""

    def history_data(self) -> dict[str, Any]:
        """The data of the ``hold.check`` history entry."""
        data: dict[str, Any] = {
            "check": self.check, "outcome": self.answer.value, "exit": self.exit,
            "duration_ms": self.duration_ms, "stdout_bytes": self.stdout_bytes,
            "stderr_bytes": self.stderr_bytes}
        extras = {"signal": self.signal, "timed_out": self.timed_out or None,
                  "spawn_error": self.spawn_error}
        data.update({key: value for key, value in extras.items() if value is not None})
        return data


class CheckRunner:
    """Runs checks under the contract; counts the processes it spawned (``spawned``)."""

    def __init__(self, *, timeout: timedelta, grace: timedelta = DEFAULT_GRACE) -> None:
        self.timeout = timeout
        self.grace = grace
        self.spawned = 0

    async def run(self, name: str, path: Path, argument: str) -> CheckResult:
        """Run the check ``name`` (the executable ``path``) once with ``argument``."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        try:
            process = await asyncio.create_subprocess_exec(
                str(path), argument, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            logger.warning("check %s could not be started: %s", name, reason)
            return CheckResult(name, Answer.UNKNOWN, None, 0, spawn_error=reason)
        self.spawned += 1
        assert process.stdout is not None
        assert process.stderr is not None
        counters = [asyncio.create_task(_count(process.stdout)),
                    asyncio.create_task(_count(process.stderr))]
        timed_out = await self._wait(process)
        stdout_bytes, stderr_bytes = await self._drain(counters)
        code = process.returncode
        result = CheckResult(
            name, answer_for(None if timed_out else code),
            exit=code if code is not None and code >= 0 and not timed_out else None,
            duration_ms=round((loop.time() - began) * 1000),
            stdout_bytes=stdout_bytes, stderr_bytes=stderr_bytes,
            signal=-code if code is not None and code < 0 else None, timed_out=timed_out)
        _log(result)
        return result

    async def _wait(self, process: asyncio.subprocess.Process) -> bool:
        """Wait for the process to exit; past the timeout terminate it, past the grace kill
        it. Whether it timed out."""
        try:
            await asyncio.wait_for(process.wait(), self.timeout.total_seconds())
            return False
        except TimeoutError:
            pass
        _signal(process, terminate=True)
        try:
            await asyncio.wait_for(process.wait(), self.grace.total_seconds())
        except TimeoutError:
            _signal(process, terminate=False)
            await process.wait()
        return True

    async def _drain(self, counters: list[asyncio.Task[int]]) -> tuple[int, int]:
        """The byte counts, once both pipes closed — or, when a process the check left behind
        keeps them open, what was counted within the grace period."""
        done, pending = await asyncio.wait(counters, timeout=self.grace.total_seconds())
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        stdout, stderr = (task.result() if task in done else 0 for task in counters)
        return stdout, stderr


async def _count(stream: asyncio.StreamReader) -> int:
    """Read ``stream`` to its end, keeping nothing but the number of bytes."""
    total = 0
    while chunk := await stream.read(_CHUNK):
        total += len(chunk)
    return total


def _signal(process: asyncio.subprocess.Process, *, terminate: bool) -> None:
    try:
        if terminate:
            process.terminate()
        else:
            process.kill()
    except ProcessLookupError:  # it exited meanwhile
        pass


def _log(result: CheckResult) -> None:
    how = ("timed out" if result.timed_out
           else f"signal {result.signal}" if result.signal is not None
           else f"exit {result.exit}")
    logger.info("check %s: %s (%s) in %d ms; stdout %d bytes, stderr %d bytes",
                result.check, result.answer.value, how, result.duration_ms,
                result.stdout_bytes, result.stderr_bytes)


def is_executable_file(path: Path) -> bool:
    """Whether ``path`` is a regular file this process may execute."""
    return path.is_file() and os.access(path, os.X_OK)

"""Running one check: an operator's executable asked "may this run start yet?".

The contract: the path is executed directly (an argv array, never a shell)
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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any, BinaryIO

from tarry.config import CHECK_BASE_ENV

__all__ = ["DEFAULT_GRACE", "Answer", "CheckResult", "CheckRunner", "answer_for",
           "check_environment", "exit_for", "is_executable_file"]

logger = logging.getLogger("tarry.holds")

DEFAULT_GRACE = timedelta(seconds=2)
"""How long a check has between SIGTERM and SIGKILL."""



class Answer(StrEnum):
    """What a check said."""

    GO = "go"
    NOT_YET = "not_yet"
    NEVER = "never"
    UNKNOWN = "unknown"
    """Could not tell: an exit code outside the contract, a crash, a timeout."""


_ANSWERS = {0: Answer.GO, 3: Answer.NOT_YET, 2: Answer.NEVER}


def check_environment(environ: Mapping[str, str], allowed: Iterable[str]) -> dict[str, str]:
    """The environment of a check script: of ``environ``, only :data:`CHECK_BASE_ENV` and
    the ``allowed`` names (``[limits] check_env``), so no ``TARRY_*`` secret, database URL or
    other credential of the worker reaches an operator's script unless named."""
    names = (*CHECK_BASE_ENV, *allowed)
    return {name: environ[name] for name in names if name in environ}


def answer_for(exit_code: int | None) -> Answer:
    """The answer an exit code gives (``None``: the check did not exit by itself)."""
    return _ANSWERS.get(exit_code, Answer.UNKNOWN) if exit_code is not None else Answer.UNKNOWN


def exit_for(answer: Answer) -> int:
    """The exit code that gives ``answer`` (1 for ``unknown``, the contract's "could not
    tell")."""
    return next((code for code, given in _ANSWERS.items() if given is answer), 1)


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

    def __init__(self, *, timeout: timedelta, grace: timedelta = DEFAULT_GRACE,
                 environment: Mapping[str, str] | None = None) -> None:
        self.timeout = timeout
        self.grace = grace
        self.environment = dict(environment if environment is not None
                                else check_environment(os.environ, ()))
        """Every variable a check receives (a scrubbed environment, see
        :func:`check_environment`)."""
        self.spawned = 0

    async def run(self, name: str, path: Path, argument: str, *,
                  run_id: str | None = None) -> CheckResult:
        """Run the check ``name`` (the executable ``path``) once with ``argument``, for the
        run ``run_id`` (named in the log line)."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        stdout, stderr = _Sink(), _Sink()
        try:
            process = await asyncio.create_subprocess_exec(
                str(path), argument, stdin=asyncio.subprocess.DEVNULL,
                stdout=stdout.write_fd, stderr=stderr.write_fd, env=self.environment)
        except OSError as exc:
            stdout.close()
            stderr.close()
            reason = exc.strerror or type(exc).__name__
            logger.warning("check %s%s could not be started: %s", name, _for(run_id), reason)
            return CheckResult(name, Answer.UNKNOWN, None, 0, spawn_error=reason)
        self.spawned += 1
        try:
            await stdout.listen()
            await stderr.listen()
            timed_out = await self._wait(process)
            await self._drain(stdout, stderr)
        except asyncio.CancelledError:  # a step's timeout came first: leave nothing behind
            _signal(process, terminate=False)
            await process.wait()
            stdout.close()
            stderr.close()
            raise
        code = process.returncode
        result = CheckResult(
            name, answer_for(None if timed_out else code),
            exit=code if code is not None and code >= 0 and not timed_out else None,
            duration_ms=round((loop.time() - began) * 1000),
            stdout_bytes=stdout.bytes, stderr_bytes=stderr.bytes,
            signal=-code if code is not None and code < 0 else None, timed_out=timed_out)
        _log(result, run_id)
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

    async def _drain(self, *sinks: _Sink) -> None:
        """Count until every output closed — or, when a process the check left behind keeps
        one open, until the grace period is over — then stop listening."""
        await asyncio.wait([sink.closed for sink in sinks], timeout=self.grace.total_seconds())
        for sink in sinks:
            sink.close()


class _Counter(asyncio.Protocol):
    """Receives a check's output and keeps nothing of it but its length."""

    def __init__(self) -> None:
        self.bytes = 0
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        """Count ``data`` and let it go."""
        self.bytes += len(data)

    def connection_lost(self, exc: Exception | None) -> None:
        """The pipe closed: every writer is gone (or the runner stopped listening)."""
        if not self.closed.done():
            self.closed.set_result(None)


class _Sink:
    """One output of a check: a pipe the check writes into and the runner only counts.

    The process's exit and the pipe's end are awaited separately, so a grandchild that
    inherited the pipe cannot keep the answer waiting.
    """

    def __init__(self) -> None:
        self._read_fd, self.write_fd = os.pipe()
        self._counter = _Counter()
        self._transport: asyncio.ReadTransport | None = None
        self._pipe: BinaryIO | None = None
        """The read end once :meth:`listen` took it (and closed the write end)."""

    @property
    def bytes(self) -> int:
        """How many bytes arrived so far."""
        return self._counter.bytes

    @property
    def closed(self) -> asyncio.Future[None]:
        """Done once the pipe has closed."""
        return self._counter.closed

    async def listen(self) -> None:
        """Give up this process's write end (the check has its own) and start counting."""
        os.close(self.write_fd)
        self._pipe = os.fdopen(self._read_fd, "rb", buffering=0)
        self._transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: self._counter, self._pipe)

    def close(self) -> None:
        """Stop listening (before :meth:`listen`: close both ends; cancelled while it
        began: close the read end it took)."""
        if self._transport is not None:
            self._transport.close()
        elif self._pipe is not None:
            self._pipe.close()
        else:
            os.close(self._read_fd)
            os.close(self.write_fd)


def _signal(process: asyncio.subprocess.Process, *, terminate: bool) -> None:
    try:
        if terminate:
            process.terminate()
        else:
            process.kill()
    except ProcessLookupError:  # it exited meanwhile
        pass


def _for(run_id: str | None) -> str:
    return f" for run {run_id}" if run_id is not None else ""


def _log(result: CheckResult, run_id: str | None) -> None:
    how = ("timed out" if result.timed_out
           else f"signal {result.signal}" if result.signal is not None
           else f"exit {result.exit}")
    logger.info("check %s%s: %s (%s) in %d ms; stdout %d bytes, stderr %d bytes",
                result.check, _for(run_id), result.answer.value, how, result.duration_ms,
                result.stdout_bytes, result.stderr_bytes)


def is_executable_file(path: Path) -> bool:
    """Whether ``path`` is a regular file this process may execute."""
    return path.is_file() and os.access(path, os.X_OK)

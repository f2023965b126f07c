"""Watching a measured phase from outside: where the CPU went and what PostgreSQL was doing.

- :class:`CpuMeter`: CPU seconds of given processes (``/proc/PID/stat``) and how busy the whole
  machine was (``/proc/stat``) between two readings;
- :class:`ActivitySampler`: a thread that samples ``pg_stat_activity`` for one database every
  few milliseconds and counts what its busy sessions were doing (on CPU, waiting for the WAL
  to reach the disk, waiting for a lock, or idle inside a transaction: waiting for the
  client).

Linux only (``/proc``); on another system the CPU figures are ``None``.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

__all__ = ["ActivitySampler", "CpuMeter", "backend_pids"]

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds process ``pid`` has used, or None if it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime (fields 14, 15)


def machine_jiffies() -> tuple[int, int] | None:
    """(busy, total) CPU time of the whole machine since boot, in clock ticks."""
    try:
        first = Path("/proc/stat").read_text(encoding="ascii").splitlines()[0].split()
    except OSError:
        return None
    values = [int(value) for value in first[1:9]]  # user nice system idle iowait irq softirq steal
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


def backend_pids(url: str) -> list[int]:
    """The server process ids of the client sessions on the database at ``url`` (this one's
    own excluded)."""
    with psycopg.connect(url, autocommit=True) as connection:
        found = connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND backend_type = 'client backend' AND pid <> pg_backend_pid()").fetchall()
    return [pid for pid, in found]


@dataclass
class CpuMeter:
    """CPU used between :meth:`start` and :meth:`stop`: by the processes of each group, and by
    the machine as a whole (a fraction of all its cores, and what the groups leave of it)."""

    _start: dict[int, float | None]
    _machine: tuple[int, int] | None
    _began: float

    @classmethod
    def start(cls, pids: Iterable[int]) -> CpuMeter:
        """Read the counters now."""
        return cls({pid: process_cpu_seconds(pid) for pid in pids}, machine_jiffies(),
                   time.monotonic())

    def stop(self, groups: dict[str, Iterable[int]]) -> dict[str, Any]:
        """Since :meth:`start`: CPU seconds per group (a process started since counts from
        zero), the cores each group kept busy on average, the machine's busy fraction, and
        the cores busy with anything else (this machine's other users included)."""
        elapsed = time.monotonic() - self._began
        seconds = {name: self._group_seconds(pids) for name, pids in groups.items()}
        cores = {name: None if used is None else used / elapsed for name, used in seconds.items()}
        busy = self._busy_fraction()
        rest = None
        if busy is not None and None not in cores.values():
            rest = busy * (os.cpu_count() or 1) - sum(value or 0.0 for value in cores.values())
        return {"seconds": elapsed, "cpu_seconds": seconds, "cores": cores,
                "machine_busy_fraction": busy, "other_cores": rest}

    def _group_seconds(self, pids: Iterable[int]) -> float | None:
        used = [self._used(pid) for pid in pids]
        if any(value is None for value in used):
            return None
        return sum(value for value in used if value is not None)

    def _busy_fraction(self) -> float | None:
        end = machine_jiffies()
        if self._machine is None or end is None or end[1] <= self._machine[1]:
            return None
        return (end[0] - self._machine[0]) / (end[1] - self._machine[1])

    def _used(self, pid: int) -> float | None:
        now = process_cpu_seconds(pid)
        if now is None:
            return None
        return now - (self._start.get(pid) or 0.0)


class ActivitySampler(threading.Thread):
    """Samples the sessions of the database at ``url`` until :meth:`finish`.

    Listening sessions (``LISTEN``) and idle ones are not counted: what is left is the work
    the server was doing, or waiting for the client in the middle of a transaction.
    """

    def __init__(self, url: str, *, interval: float = 0.01) -> None:
        super().__init__(name="pg_stat_activity sampler", daemon=True)
        self.url = url
        self.interval = interval
        self.samples = 0
        self.states: Counter[str] = Counter()
        self._finished = threading.Event()
        self._error: BaseException | None = None

    def run(self) -> None:
        try:
            with psycopg.connect(self.url, autocommit=True) as connection:
                self._sample(connection)  # at least one, however short the phase
                while not self._finished.wait(self.interval):
                    self._sample(connection)
        except BaseException as error:  # reported by finish()
            self._error = error

    def finish(self) -> dict[str, Any]:
        """Stop sampling; the busy sessions per sample, by what they were doing."""
        self._finished.set()
        self.join()
        if self._error is not None:
            raise RuntimeError("sampling pg_stat_activity failed") from self._error
        samples = max(self.samples, 1)
        return {"samples": self.samples,
                "busy_sessions_per_sample": sum(self.states.values()) / samples,
                "by_state": {state: count / samples
                             for state, count in self.states.most_common()}}

    def _sample(self, connection: psycopg.Connection[Any]) -> None:
        rows = connection.execute(
            "SELECT state, wait_event_type, wait_event FROM pg_stat_activity "
            "WHERE datname = current_database() AND backend_type = 'client backend' "
            "AND pid <> pg_backend_pid() AND state <> 'idle' "
            "AND query NOT LIKE 'LISTEN %'").fetchall()
        self.samples += 1
        self.states.update(_describe(*row) for row in rows)


def _describe(state: str | None, wait_type: str | None, wait_event: str | None) -> str:
    """One session's doing in a few words."""
    if state == "idle in transaction":
        return "idle in transaction (waiting for the client)"
    if wait_type is None:
        return f"{state}: on CPU"
    return f"{state}: waiting {wait_type}/{wait_event}"

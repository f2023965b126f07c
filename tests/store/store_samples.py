"""Runs and instants for the store tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from tarry.model import HistoryEntry, NewRun, RunStatus, RunUpdate

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
LEASE = timedelta(seconds=30)


def at(seconds: float) -> datetime:
    """The instant ``seconds`` after T0."""
    return T0 + timedelta(seconds=seconds)


def new_run(run_id: str, *, status: RunStatus = RunStatus.PENDING,
            due_at: datetime | None = T0, created_at: datetime = T0, flow: str = "greet",
            **fields: Any) -> NewRun:
    """A run to create; due at T0 unless told otherwise."""
    return NewRun(id=run_id, flow=flow, flow_digest=f"digest-{flow}", status=status,
                  inputs=fields.pop("inputs", {"name": "Ada"}), target=fields.pop("target", None),
                  created_at=created_at, due_at=due_at, **fields)


def entry(kind: str, seconds: float = 0, **data: Any) -> HistoryEntry:
    """A history entry at T0 + ``seconds``."""
    return HistoryEntry(at=at(seconds), kind=kind, data=data)


def suspend(run_id: str, wake: datetime, **fields: Any) -> RunUpdate:
    """An update that releases the run, waiting until ``wake``."""
    return RunUpdate(run_id=run_id, status=RunStatus.WAITING, state=fields.pop("state", {}),
                     history=fields.pop("history", [entry("wait registered")]), due_at=wake,
                     **fields)


def eventually(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Whether ``condition`` holds now or becomes true within ``timeout`` seconds (for
    effects that cross connections asynchronously, such as PostgreSQL notifications)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True

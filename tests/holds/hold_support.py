"""What the hold tests share: instants, check scripts written into a folder, a harness."""

from __future__ import annotations

import random
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tarry.model import HistoryEntry, NewRun, RunStatus

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
LEASE = timedelta(seconds=30)


def at(seconds: float) -> datetime:
    """The instant ``seconds`` after T0."""
    return T0 + timedelta(seconds=seconds)


def entry(kind: str, seconds: float = 0, **data: Any) -> HistoryEntry:
    """A history entry at T0 + ``seconds``."""
    return HistoryEntry(at=at(seconds), kind=kind, data=data)


def new_run(run_id: str, *, status: RunStatus = RunStatus.PENDING,
            due_at: datetime | None = T0, created_at: datetime = T0, flow: str = "deploy",
            **fields: Any) -> NewRun:
    """A run to create; due at T0 unless told otherwise."""
    return NewRun(id=run_id, flow=flow, flow_digest=f"digest-{flow}", status=status,
                  inputs=fields.pop("inputs", {}), target=fields.pop("target", None),
                  created_at=created_at, due_at=due_at, **fields)


def script(folder: Path, name: str, body: str) -> Path:
    """An executable ``#!/bin/sh`` script ``name`` in ``folder`` running ``body``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


class NoJitter(random.Random):
    """A generator whose ``random()`` is always 0: no jitter, exact instants."""

    def random(self) -> float:
        return 0.0

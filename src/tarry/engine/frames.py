"""Frames: the state of one scope being executed (see :mod:`tarry.engine.interpreter`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tarry.clock import from_iso

__all__ = ["new_frame", "since"]


def new_frame() -> dict[str, Any]:
    """The state of a scope that has not started yet: ``at`` step 0 of its ``steps``, no
    bindings ``b`` yet."""
    return {"at": 0, "phase": "steps", "b": {}}


def since(cur: Mapping[str, Any]) -> datetime | None:
    """When the wait kept in ``cur`` was registered (its ``since``), if that was recorded."""
    recorded = cur.get("since")
    return from_iso(recorded) if recorded else None

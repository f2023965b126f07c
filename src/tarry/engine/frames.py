"""Frames: the state of one scope being executed (see :mod:`tarry.engine.interpreter`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from tarry.clock import from_iso

__all__ = ["live_steps", "new_frame", "since"]


def new_frame() -> dict[str, Any]:
    """The state of a scope that has not started yet: ``at`` step 0 of its ``steps``, no
    bindings ``b`` yet."""
    return {"at": 0, "phase": "steps", "b": {}}


def since(cur: Mapping[str, Any]) -> datetime | None:
    """When the wait kept in ``cur`` was registered (its ``since``), if that was recorded."""
    recorded = cur.get("since")
    return from_iso(recorded) if recorded else None


_CHILD_FRAMES = ("frame", "remind_frame")
"""The keys under which a step in progress keeps a child frame: a group's or a repeat
iteration's steps, the steps of a wait's reminder."""


def live_steps(frame: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The private state (``cur``) of every step in progress at or below ``frame`` — the live
    path: each container's own, then its children's (a group's or a repeat's ``frame``, a
    for_each's ``live`` frames, a reminder's ``remind_frame``)."""
    stack = [frame]
    while stack:
        cur = stack.pop().get("cur")
        if not isinstance(cur, dict):
            continue
        yield cur
        stack.extend(child for key in _CHILD_FRAMES if isinstance(child := cur.get(key), dict))
        live = cur.get("live")
        if isinstance(live, dict):
            stack.extend(live.values())

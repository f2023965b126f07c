"""Frames: the state of one scope being executed (see :mod:`tarry.engine.interpreter`)."""

from __future__ import annotations

from typing import Any

__all__ = ["new_frame"]


def new_frame() -> dict[str, Any]:
    """The state of a scope that has not started yet: ``at`` step 0 of its ``steps``, no
    bindings ``b`` yet."""
    return {"at": 0, "phase": "steps", "b": {}}

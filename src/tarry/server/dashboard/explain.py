"""The one place the dashboard gets a run's explanation from, so it says exactly what
``tarry show`` says: the engine's :func:`tarry.engine.explain.explain_wait`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tarry.engine.explain import explain_wait

__all__ = ["explanation"]


def explanation(doc: Mapping[str, Any]) -> str | None:
    """What the run waits for, since when, until when, and what happens then; None when it
    waits for nothing."""
    return explain_wait(doc)

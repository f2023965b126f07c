"""Each step's duration and each wait's waited time, read from a run's history.

A step's span runs from its ``step.started`` entry to the entry that ended it
(``step.completed`` or ``step.failed``); a step that waited (``wait.registered``) also has
the time from that registration to its end. A step entered again (an iteration of a loop, a
retry after the run failed) gets a span per entry; one still open has no end yet.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from tarry.clock import iso
from tarry.model import HistoryEntry

__all__ = ["step_timings"]

_ENDINGS = {"step.completed": "completed", "step.failed": "failed"}


def step_timings(history: Iterable[HistoryEntry]) -> list[dict[str, Any]]:
    """One ``{step, status, started_at, ended_at, duration_ms, waited_ms}`` per time a step
    ran, in the order the steps started; ``status`` is ``running`` or ``waiting`` (with null
    end and duration) until the step ends; ``waited_ms`` is null for a step that did not
    wait."""
    spans: list[dict[str, Any]] = []
    open_spans: dict[str, tuple[dict[str, Any], datetime, datetime | None]] = {}
    for entry in history:
        if entry.step is None:
            continue
        if entry.kind == "step.started":
            span: dict[str, Any] = {"step": entry.step, "status": "running",
                                    "started_at": iso(entry.at), "ended_at": None,
                                    "duration_ms": None, "waited_ms": None}
            spans.append(span)
            open_spans[entry.step] = (span, entry.at, None)
        elif entry.kind == "wait.registered" and entry.step in open_spans:
            waiting, started, _ = open_spans[entry.step]
            waiting["status"] = "waiting"
            open_spans[entry.step] = (waiting, started, entry.at)
        elif entry.kind in _ENDINGS and entry.step in open_spans:
            ended, started, waited_from = open_spans.pop(entry.step)
            ended.update(status=_ENDINGS[entry.kind], ended_at=iso(entry.at),
                         duration_ms=_millis(entry.at - started))
            if waited_from is not None:
                ended["waited_ms"] = _millis(entry.at - waited_from)
    return spans


def _millis(delta: timedelta) -> int:
    return delta // timedelta(milliseconds=1)

"""What one run did at each step of its flow, read from its history, for its drawing.

Each node gets one :class:`~tarry.graph.svg.Mark`: ``failed`` where a step failed and never
completed after, ``retried`` where it failed and then completed, ``here`` where a step started
and has not finished (a wait in progress: every ``for_each`` branch that waits is one),
``done`` and ``skipped`` as the history says. The note is how long the step took, from its
first ``step.started`` to its last ``step.completed`` or ``step.failed`` (all iterations of a
loop together), or since when it has been at it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from tarry.clock import from_iso
from tarry.graph.svg import Mark
from tarry.language.durations import format_duration
from tarry.model import step_node

__all__ = ["path_marks"]


def path_marks(history: Iterable[Mapping[str, Any]], now: datetime) -> dict[str, Mark]:
    """The mark of each step ``history`` (a run document's) names, as of ``now``."""
    started: dict[str, datetime] = {}
    ended: dict[str, datetime] = {}
    open_paths: dict[str, set[str]] = {}
    outcome: dict[str, str] = {}
    for entry in history:
        path = entry.get("step")
        kind = entry.get("kind", "")
        if not isinstance(path, str) or not kind.startswith("step."):
            continue
        node, at = step_node(path), from_iso(entry["at"])
        if kind == "step.started":
            started.setdefault(node, at)
            open_paths.setdefault(node, set()).add(path)
        elif kind in ("step.completed", "step.failed", "step.skipped"):
            open_paths.get(node, set()).discard(path)
            ended[node] = at
            outcome[node] = _after(outcome.get(node), kind)
    marks = {}
    for node in started.keys() | outcome.keys():
        if open_paths.get(node):
            marks[node] = Mark("here", f"since {format_duration(now - started[node])}")
        elif node in outcome:
            took = (format_duration(ended[node] - started[node])
                    if node in started and outcome[node] != "skipped" else "")
            marks[node] = Mark(outcome[node], took)
    return marks


def _after(before: str | None, kind: str) -> str:
    """A node's outcome once ``kind`` happened at it (in a loop, again)."""
    now = {"step.completed": "done", "step.failed": "failed", "step.skipped": "skipped"}[kind]
    if before == "failed" and now == "done":
        return "retried"
    if before in ("failed", "retried") and now == "skipped":
        return before
    return now

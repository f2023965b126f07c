"""Retrying a failed run: its state made ready to run the step that failed again (pure).

A failed run's state still says where it failed. In a YAML flow every frame on the path to
the failed step stays at that step (a step's private state, ``cur``, is dropped only once it
completed), so a retry forgets the failed step's ``cur`` — the step starts again, as a new
attempt, with its whole ``retry`` policy — and takes the failure back from every ``for_each``
the path crosses (its count of failed iterations). Everything else is kept: the steps that
completed, the other branches of a ``for_each`` where they stood, a recover scope in
progress (its failed recover step runs again, not the steps it recovers from).

A Python flow replays its journal from the top: a retry forgets what the failed operation
recorded (and anything its scope recorded after it), so the replay runs it again; what the
run recorded before is returned from the journal as usual. A failure no step is named for
(the flow's own code raised, say) forgets nothing: the replay simply runs the flow again.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tarry.engine.journal import BRANCHES, OPS, whole_state
from tarry.model import JournalEntry

__all__ = ["Rearmed", "rearm"]

_PART = re.compile(r"(?P<id>[^\[\]]+)(?:\[(?P<index>\d+)\])?")


@dataclass(frozen=True)
class Rearmed:
    """A failed run's state ready to run again, and the journal entries to forget."""

    state: dict[str, Any]
    forget: tuple[tuple[str, str], ...] = ()


def rearm(state: Mapping[str, Any], error: Mapping[str, Any] | None,
          journal: Sequence[JournalEntry] = ()) -> Rearmed:
    """``state`` (a copy: the argument is left alone) with the failure of ``error``'s step
    undone; ``journal`` is the run's journal (what a Python flow's retry reads)."""
    fresh = copy.deepcopy(dict(state))
    step = (error or {}).get("step")
    if not isinstance(step, str):
        return Rearmed(fresh)
    if isinstance(fresh.get("root"), dict):
        _rearm_frames(fresh["root"], step)
        return Rearmed(fresh)
    if isinstance(fresh.get("journal"), dict):
        return Rearmed(fresh, _forget_operation(fresh["journal"], step, state, journal))
    return Rearmed(fresh)


# -- YAML flows ------------------------------------------------------------------------------


def _rearm_frames(root: dict[str, Any], path: str) -> None:
    """Walk the frames down ``path`` (``a.b[2].c``; a reminder's steps under ``w.remind.``)
    and forget the last step's private state."""
    frame: Any = root
    parts = path.split(".")
    position = 0
    while isinstance(frame, dict):
        match = _PART.fullmatch(parts[position])
        if position == len(parts) - 1 or match is None:
            frame.pop("cur", None)
            return
        cur = frame.get("cur")
        if not isinstance(cur, dict):
            return
        frame, position = _child(cur, match["index"], parts, position + 1)


def _child(cur: dict[str, Any], index: str | None, parts: list[str],
           position: int) -> tuple[Any, int]:
    """The frame below a container's state ``cur`` on the path (and where the path goes on):
    a loop iteration's (``[index]``), a reminder's, a group's."""
    if index is not None:
        live = cur.get("live")
        if isinstance(live, dict):  # a for_each: the failed branch, its failure taken back
            failures = cur.get("failures")
            cur["failures"] = max(0, failures - 1) if isinstance(failures, int) else 0
            return live.get(index), position
        return cur.get("frame"), position
    if parts[position] == "remind" and "remind_frame" in cur and position + 1 < len(parts):
        return cur["remind_frame"], position + 1
    return cur.get("frame"), position


# -- Python flows ----------------------------------------------------------------------------


def _forget_operation(live: dict[str, Any], path: str, state: Mapping[str, Any],
                      journal: Sequence[JournalEntry]) -> tuple[tuple[str, str], ...]:
    """Drop the operation at ``path``, and what its scope recorded after it, from the run's
    live journal document (``live``, changed in place); the journal entries to forget."""
    if not (isinstance(live.get("ops"), dict) and isinstance(live.get("order"), dict)):
        return ()  # not a journal this code wrote: there is nothing to forget
    whole = whole_state(copy.deepcopy(dict(state)), journal)["journal"]
    dropped = set(_dropped(whole["order"], path))
    if not dropped:
        return ()

    def below(key: str) -> bool:
        return key in dropped or any(key.startswith(f"{op}[") for op in dropped)

    live["ops"] = {key: value for key, value in live["ops"].items() if not below(key)}
    live["order"] = {prefix: [entry for entry in listed if not below(prefix + entry[1])]
                     for prefix, listed in live["order"].items() if not below(prefix)}
    return tuple((entry.scope, entry.key) for entry in journal
                 if entry.scope in (OPS, BRANCHES) and below(entry.key))


def _dropped(order: Mapping[str, list[list[str]]], path: str) -> Iterator[str]:
    """The operation at ``path`` and those its scope recorded after it."""
    for prefix, listed in order.items():
        names = [prefix + name for _, name in listed]
        if path in names:
            yield from names[names.index(path):]
            return

"""A Python run's journal as its run document shows it: one entry per recorded operation.

A Python flow records each ``ctx`` operation in its journal (:mod:`tarry.sdk.replay`): the
finished ones as the run's journal entries (scope ``op``, and ``branch`` for the results of
a ``parallel`` or ``map``), the rest in the run's state. :func:`operations` puts them back in
the order they were recorded and says of each its ``name`` (its path), ``kind``, ``status``
(``completed``, ``failed``, ``waiting`` or ``running``), ``attempt`` (a step's 1, a condition's
checks so far), ``started_at`` / ``ended_at`` (from the run's history), ``result`` and
``error``. Secrets are masked in every text, and a value whose JSON is longer than
:attr:`Shown.bytes` is replaced by :func:`clipped`'s marker.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tarry.config import Limits
from tarry.engine.journal import BRANCHES, OPS
from tarry.model import JournalEntry
from tarry.secrets import Redactor

__all__ = ["TRUNCATED", "Shown", "clipped", "operations"]

TRUNCATED = "$truncated"
"""The key of the marker that replaces a value too long to show."""


@dataclass(frozen=True)
class Shown:
    """How recorded values are shown: secrets masked, each at most ``bytes`` of JSON."""

    bytes: int = Limits.shown_bytes
    redact: Redactor = field(default_factory=Redactor)


def clipped(value: Any, shown: Shown) -> Any:
    """``value`` with secrets masked in its strings; when its compact JSON is longer than
    ``shown.bytes`` (UTF-8), the marker ``{"$truncated": {"bytes": n, "shown": "<the first
    bytes of that JSON>"}}`` instead."""
    masked = _masked(value, shown.redact)
    text = json.dumps(masked, ensure_ascii=False, separators=(",", ":"))
    encoded = text.encode()
    if len(encoded) <= shown.bytes:
        return masked
    head = encoded[:shown.bytes].decode(errors="ignore")
    return {TRUNCATED: {"bytes": len(encoded), "shown": head}}


def _masked(value: Any, redact: Redactor) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_masked(item, redact) for item in value]
    if isinstance(value, dict):
        return {key: _masked(item, redact) for key, item in value.items()}
    return value


_Span = Mapping[str, Any]


def operations(state: Mapping[str, Any], entries: Sequence[JournalEntry],
               spans: Sequence[_Span], shown: Shown) -> list[dict[str, Any]] | None:
    """The journal of a Python run (None for a YAML run): its finished operations in the
    order they were recorded, then those still in progress. ``spans`` are the run's step
    timings (:func:`~tarry.engine.timings.step_timings`), for the instants."""
    live = state.get("journal")
    if not isinstance(live, Mapping):
        return None
    timing = {span["step"]: span for span in spans}
    branches = _branch_results(entries)
    return [_operation(path, kind, recorded, timing.get(path), shown,
                       branches=branches.get(path, {}))
            for path, kind, recorded in _recorded(entries, live)]


def _recorded(entries: Sequence[JournalEntry],
              live: Mapping[str, Any]) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    for entry in entries:
        if entry.scope == OPS:
            yield entry.key, entry.value["kind"], entry.value["entry"]
    ops: Mapping[str, Any] = live.get("ops", {})
    for prefix, listed in live.get("order", {}).items():
        for kind, name in listed:
            if prefix + name in ops:
                yield prefix + name, kind, ops[prefix + name]


def _branch_results(entries: Sequence[JournalEntry]) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if entry.scope == BRANCHES:
            path, _, index = entry.key.rpartition("[")
            results.setdefault(path, {})[index.removesuffix("]")] = entry.value
    return results


def _operation(path: str, kind: str, recorded: Mapping[str, Any], span: _Span | None,
               shown: Shown, *, branches: Mapping[str, Any]) -> dict[str, Any]:
    status, result, error = _READERS.get(kind, _unknown)(recorded, branches)
    return {
        "name": path, "kind": kind, "status": status,
        "attempt": recorded.get("attempt", 1) if kind in _ATTEMPTED else None,
        "started_at": span["started_at"] if span else None,
        "ended_at": span["ended_at"] if span else None,
        "result": clipped(result, shown), "error": clipped(error, shown),
    }


_Reading = tuple[str, Any, Any]
"""An operation's status, result and error."""


def _step(entry: Mapping[str, Any], _: Mapping[str, Any]) -> _Reading:
    if "error" in entry:
        return "failed", None, entry["error"]
    return ("completed", entry["result"], None) if "result" in entry else ("running", None, None)


def _value(entry: Mapping[str, Any], _: Mapping[str, Any]) -> _Reading:
    return "completed", entry.get("value"), None


def _timer(entry: Mapping[str, Any], _: Mapping[str, Any]) -> _Reading:
    return ("completed" if entry.get("done") else "waiting"), None, None


def _outcome(entry: Mapping[str, Any], _: Mapping[str, Any]) -> _Reading:
    return ("completed", entry["outcome"], None) if "outcome" in entry else ("waiting", None, None)


def _condition(entry: Mapping[str, Any], _: Mapping[str, Any]) -> _Reading:
    status = entry.get("status")
    if status == "met":
        return "completed", entry.get("state"), None
    if status is None:
        return "waiting", entry.get("state"), None
    return "failed", entry.get("state"), entry.get("error") or {
        "type": "condition-exhausted", "message": f"not met after {entry['attempt']} attempts"}


def _branching(entry: Mapping[str, Any], journaled: Mapping[str, Any]) -> _Reading:
    done = {**journaled, **entry.get("done", {})}
    if len(done) < entry.get("branches", 0):
        return "running", None, None
    return "completed", [done[str(index)] for index in range(len(done))], None


def _marker(entry: Mapping[str, Any], _: Mapping[str, Any]) -> _Reading:
    return "completed", True, None


def _unknown(entry: Mapping[str, Any], _: Mapping[str, Any]) -> _Reading:
    return "running", None, None


_READERS: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], _Reading]] = {
    "step": _step, "now": _value, "random": _value, "wait": _timer,
    "wait_for_event": _outcome, "ask": _outcome, "wait_for_condition": _condition,
    "parallel": _branching, "map": _branching, "patch": _marker,
}
_ATTEMPTED = frozenset({"step", "wait_for_condition"})

"""How the dashboard words things: instants, how long ago or ahead, and what a run waits for.

Pure functions over run documents (the JSON every interface prints) and an injected ``now``; the
templates only place what these return.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from tarry.clock import from_iso

__all__ = [
    "STATUS_ORDER",
    "ago_or_ahead",
    "conditions_text",
    "ending",
    "human_instant",
    "pretty_json",
    "run_line",
    "short_span",
    "span_text",
    "wait_line",
]

STATUS_ORDER = ("waiting", "held", "pending", "running", "succeeded", "failed", "cancelled",
                "refused")
"""The statuses in the order the dashboard lists them: the ones that wait first."""

_Document = Mapping[str, Any]

_UNITS = (("d", timedelta(days=1)), ("h", timedelta(hours=1)), ("m", timedelta(minutes=1)),
          ("s", timedelta(seconds=1)))


def human_instant(text: str | None) -> str:
    """``2026-09-01T09:00:00.000Z`` as ``2026-09-01 09:00:00 UTC`` (milliseconds only when
    there are some); empty for None."""
    if not text:
        return ""
    instant = from_iso(text)
    clock = instant.strftime("%H:%M:%S")
    if instant.microsecond:
        clock += f".{instant.microsecond // 1000:03d}"
    return f"{instant:%Y-%m-%d} {clock} UTC"


def short_span(delta: timedelta) -> str:
    """A duration in its two largest units: ``2d 3h``, ``14m 5s``, ``41s``, ``250ms``."""
    delta = abs(delta)
    if delta < timedelta(seconds=1):
        return f"{delta // timedelta(milliseconds=1)}ms"
    parts: list[str] = []
    for name, unit in _UNITS:
        count, delta = divmod(delta, unit)
        if count or parts:
            parts.append(f"{count}{name}")
        if len(parts) == 2:
            break
    return " ".join(part for part in parts if not part.startswith("0")) or "0s"


def ago_or_ahead(text: str | None, now: datetime) -> str:
    """``in 2h 14m``, ``5m 3s ago`` or ``now``, for an instant in the run document's form."""
    if not text:
        return ""
    delta = from_iso(text) - now
    if abs(delta) < timedelta(seconds=1):
        return "now"
    return f"in {short_span(delta)}" if delta > timedelta(0) else f"{short_span(delta)} ago"


def pretty_json(value: Any) -> str:
    """A JSON value indented for reading."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def inline_json(value: Any) -> str:
    """A JSON value on one line, as written (``'`` stays ``'``: the page escapes it as HTML,
    where Jinja's ``tojson``, made for scripts, writes ``\\u0027``)."""
    return json.dumps(value, ensure_ascii=False, default=str)


def conditions_text(conditions: Sequence[Mapping[str, Any]]) -> str:
    """A hold's conditions: ``after 2026-09-01 09:00:00 UTC + ticket (go) + ci``."""
    return " + ".join(f"after {human_instant(c['after'])}" if "after" in c
                      else f"{c['check']} (go)" if c.get("clear") else str(c["check"])
                      for c in conditions)


def _matching(match: Any) -> str:
    if not isinstance(match, Mapping) or not match:
        return ""
    return " matching " + ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}"
                                    for key, value in match.items())


def _what(waiting: Mapping[str, Any]) -> str:
    """What the run waits for, without the instants."""
    kind = waiting.get("kind") or "something"
    step = f" at step '{waiting['step']}'" if waiting.get("step") else ""
    if kind == "event":
        return f"{_events(waiting)}{step}"
    if kind == "hold":
        return f"hold: {conditions_text(waiting.get('conditions') or []) or 'its gate'}"
    if kind == "child" and waiting.get("run"):
        return f"child run {str(waiting['run'])[:12]}{step}"
    if kind == "throttle":
        key = f" '{waiting['key']}'" if waiting.get("key") else ""
        return f"throttle{key}: its turn to start"
    if kind == "window":
        return f"window of calendar {waiting.get('calendar')}{step or ' before its start'}"
    return f"{_WAIT_NOUNS.get(kind, kind)}{step}"


def _events(waiting: Mapping[str, Any]) -> str:
    """``event a matching k="v"``, or every alternative of a ``wait_for: {any: …}``."""
    alternatives = waiting.get("alternatives") or [
        {"event_type": waiting.get("event_type"), "match": waiting.get("match")}]
    return " or ".join(f"event {alt.get('event_type') or ''}{_matching(alt.get('match'))}"
                       for alt in alternatives if isinstance(alt, Mapping))


_WAIT_NOUNS = {"timer": "timer", "poll": "next poll", "retry": "retry", "task": "task",
               "child": "child run"}

_UNTIL_WORDS = {"hold": "next check", "poll": "polls at", "retry": "retries at",
                "throttle": "starts at", "window": "opens at"}
"""How the instant of a wait is introduced, per kind (default: ``until``)."""


def wait_line(waiting: Mapping[str, Any] | None, now: datetime) -> str:
    """One line for a table row: what the run waits for and until when, e.g.
    ``event slack.approval matching message="1700.1" at step 'approval' · until 2026-09-02
    09:00:00 UTC (in 23h 59m)``; empty when it waits for nothing."""
    if not waiting:
        return ""
    until = waiting.get("until")
    word = _UNTIL_WORDS.get(waiting.get("kind") or "", "until")
    when = f" · {word} {human_instant(until)} ({ago_or_ahead(until, now)})" if until else ""
    others = waiting.get("others") or 0
    more = f" · and {others} other wait{'s' if others > 1 else ''}" if others else ""
    return _what(waiting) + when + more


def run_line(doc: _Document, now: datetime) -> str:
    """What a row of the runs table says about a run: what it waits for and until when,
    else how it ended or what it is doing."""
    if doc.get("waiting_for"):
        return wait_line(doc["waiting_for"], now)
    if doc["status"] == "pending":
        return "due to start " + (ago_or_ahead(doc.get("due_at"), now) or "now")
    if doc["status"] == "running":
        return "running on a worker"
    return ending(doc)


def ending(doc: _Document) -> str:
    """How a run ended: its exit, its error, its refusal token, or who cancelled it."""
    status = doc["status"]
    if status == "succeeded":
        return f"succeeded with exit '{doc.get('exit')}'"
    if status == "failed":
        error = doc.get("error") or {}
        where = f"step '{error['step']}': " if error.get("step") else ""
        return f"failed: {where}{error.get('type', 'error')}: {error.get('message', '')}"
    if status == "refused":
        return f"refused: {doc.get('reason')}"
    return str(status)


def span_text(millis: int | None) -> str:
    """A step's duration or waited time as the steps table shows it (empty when null)."""
    return "" if millis is None else short_span(timedelta(milliseconds=millis))

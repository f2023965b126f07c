"""What a run waits for, in one line: the same words everywhere.

Every interface explains a wait with :func:`explain_wait` over the run document, so ``tarry
show``, ``tarry run``, the API (``waiting_for.explanation``) and the dashboard say the same
thing. It reads only ``waiting_for``, which the worker writes when the run suspends:

- ``kind``, ``step``, ``until``, and ``since`` — when the wait was registered, recorded in the
  run's state at that moment (no history is scanned);
- for an event wait, ``alternatives``: every ``{event_type, match}`` the step waits on (a
  ``wait_for: {any: [...]}`` names each one);
- ``others``: how many other branches of the run wait besides the one shown (the one shown is
  the one due first);
- ``next_reminder``: when the reminder of the wait shown runs next, if it has one;
- for a slot, ``key`` (the flow's concurrency key, or the step's pool), ``ahead`` (how many
  wait before it) and, in a document read with the store, ``holders`` (the runs holding the
  key's slots);
- for a wait on a business calendar (a ``window``, or a length counted in business time),
  ``calendar`` and ``until_local``, the deadline on that calendar's clock;
- for a hold, ``faults`` (check name → faults in a row) and ``fault_limit``
  (``TARRY_CHECK_FAULTS``): a hold about to be refused ``hold-unanswerable`` says so;
- for a throttle, ``key``, ``limit`` and ``per``: whose turn it waits for, and the pace.

A run that has ended waits for nothing: no explanation, and its document's ``waiting_for``
is null.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["describe_alternatives", "explain_wait"]

_WAIT_PHRASES: dict[str, tuple[str, str]] = {
    "timer": ("waiting for timer", "then resumes at step '{step}'"),
    "event": ("waiting for {alternatives}",
              "then resumes at step '{step}' with {which}, or with status timeout at the "
              "deadline"),
    "poll": ("waiting to poll again", "then runs the next iteration of step '{step}'"),
    "retry": ("waiting to retry", "then runs step '{step}' again"),
    "hold": ("held before its first step", "then checks its hold again"),
    "task": ("waiting for a person to complete task '{step}'",
             "then resumes with their decision, or with status timeout at the deadline"),
    "slot": ("waiting for a slot of {slot}{queue}", "{then_slot}"),
    "child": ("waiting for child run {run} to end",
              "then resumes at step '{step}' with its outcome{deadline}"),
    "throttle": ("waiting for its turn to start{key} (throttle: at most {limit} starts per "
                 "{per})", "then runs its first step"),
    "window": ("waiting for calendar '{calendar}' to open", "then starts step '{step}'"),
}
"""kind → (what it waits for, what happens next)."""

_TERMINAL = frozenset({"succeeded", "failed", "cancelled", "refused"})


def explain_wait(doc: Mapping[str, Any]) -> str | None:
    """One line: what the run waits for, at which step, since when, until when, what next.

    ``None`` when the run waits for nothing (it has ended, or is not suspended). A wait
    stored before ``since`` was recorded is dated by the run's last update.
    """
    waiting = doc.get("waiting_for")
    if not waiting or doc.get("status") in _TERMINAL:
        return None
    kind = waiting.get("kind", "")
    what, then = _WAIT_PHRASES.get(kind, (f"waiting for {kind}", "then resumes"))
    step = waiting.get("step") or ""
    alternatives = _alternatives(waiting)
    if kind == "window" and not step:
        what, then = ("held before its first step until calendar '{calendar}' opens",
                      "then starts its first step")
    until = waiting.get("until")
    fields = {"step": step, "calendar": waiting.get("calendar") or "",
              "alternatives": describe_alternatives(alternatives),
              "which": "the event" if len(alternatives) < 2 else "the first of them to arrive",
              "key": f" with key '{waiting['key']}'" if waiting.get("key") else "",
              "limit": waiting.get("limit", ""), "per": waiting.get("per", ""),
              **_slot_fields(waiting),
              "run": waiting.get("run") or "", "deadline": (
                  ", or with status timeout at the deadline (the child is cancelled)"
                  if until else "")}
    at_step = f" at step '{step}'" if step else ""
    since = waiting.get("since") or doc.get("updated_at")
    others = waiting.get("others") or 0
    more = (f"; {others} other branch{'es' if others > 1 else ''} of the run wait"
            f"{'s' if others == 1 else ''} as well") if others else ""
    bound = f" until {until}" if until else " (no deadline)" if kind == "child" else ""
    return (f"{what.format(**fields)}{at_step} since {since}{bound}"
            f"{_local(waiting)}; {then.format(**fields)}{more}{_meanwhile(waiting)}")


def _local(waiting: Mapping[str, Any]) -> str:
    """`` (2026-12-28 10:00 Europe/Berlin, support hours)`` for a wait on a calendar."""
    if not waiting.get("calendar") or not waiting.get("until_local"):
        return ""
    return f" ({waiting['until_local']}, {waiting['calendar']} hours)"


def _slot_fields(waiting: Mapping[str, Any]) -> dict[str, str]:
    """The words of a slot wait: whose slot (the flow's concurrency key, or a step's pool),
    how many wait before the run, and what it does once a slot is handed to it."""
    if waiting.get("kind") != "slot":
        return {}
    key = json.dumps(waiting.get("key"), ensure_ascii=False)
    ahead = waiting.get("ahead")
    holders = waiting.get("holders") or []
    queue = "" if ahead is None else f" ({ahead} ahead in the queue)"
    if holders:
        queue += f", held by {', '.join(str(run) for run in holders)}"
    if waiting.get("step"):
        return {"slot": f"pool {key}", "queue": queue,
                "then_slot": "then runs the step's action once a slot frees up"}
    return {"slot": f"concurrency key {key}", "queue": queue,
            "then_slot": "then starts its first step once a run of the key ends"}


def _meanwhile(waiting: Mapping[str, Any]) -> str:
    """What happens before the wait ends: the next reminder, or the faults a hold's checks
    have counted towards ``hold-unanswerable``."""
    if waiting.get("next_reminder"):
        return f"; next reminder at {waiting['next_reminder']}"
    faults = {name: count for name, count in (waiting.get("faults") or {}).items() if count}
    limit = waiting.get("fault_limit")
    return "".join(
        f"; check {name} could not tell {count} time{'s' if count > 1 else ''} in a row "
        f"({limit} refuse the run hold-unanswerable)" for name, count in faults.items())


def describe_alternatives(alternatives: list[Mapping[str, Any]]) -> str:
    """``event 'a' matching k="v" or event 'b' matching …``."""
    return " or ".join(
        f"event '{alt.get('event_type') or ''}'"
        + (f" matching {_pairs(alt['match'])}" if alt.get("match") else "")
        for alt in alternatives) or "an event"


def _alternatives(waiting: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = waiting.get("alternatives")
    if found:
        return list(found)
    if waiting.get("event_type"):
        return [{"event_type": waiting["event_type"], "match": waiting.get("match")}]
    return []


def _pairs(data: Mapping[str, Any]) -> str:
    return " ".join(f"{key}={json.dumps(value, ensure_ascii=False, default=str)}"
                    for key, value in data.items())

"""``ask``: a task for a person, a wait whose event comes from a form.

The step renders its title, details and assignees once, registers a task with a fresh id and
its deadline, and waits like a ``wait_for``: whichever comes first wins, a completion (put in
the run's inbox by the transaction that accepted it, under the step's path), then the
deadline, then a due reminder, which runs the reminder steps and returns to the *same* wait.
The task itself (what the inbox lists and people complete) is the :class:`TaskRequest` the
blocked step reports; the store keeps it open for as long as a checkpoint reports it.

Binds ``{status: completed|timeout, outcome, data, by, completed_at}``; on timeout all but
``status`` are null. Timing out is not a failure.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tarry._text import clip
from tarry.clock import from_iso, iso
from tarry.engine.frames import since
from tarry.engine.outcome import Blocked, Done, Outcome, WaitInfo
from tarry.engine.reminders import (
    note_calendar,
    remind,
    reminder_pending,
    reminder_waits,
    schedule_reminders,
)
from tarry.engine.values import to_json
from tarry.errors import ExpressionError
from tarry.language.model import Ask, Step
from tarry.model import TASK_INBOX_TYPE, TaskRequest

if TYPE_CHECKING:
    from tarry.engine.interpreter import Env, Interpreter, Names

__all__ = ["completed_binding", "new_task_id", "open_task", "run_ask", "take_completion",
           "task_request", "timeout_binding"]


def new_task_id() -> str:
    """A fresh task id: 16 hex digits, short enough to type."""
    return secrets.token_hex(8)


def completed_binding(completion: dict[str, Any]) -> dict[str, Any]:
    """The binding of a completed task, from the completion put in its run's inbox."""
    return {"status": "completed", "outcome": completion["outcome"],
            "data": completion["data"], "by": completion["by"],
            "completed_at": completion["completed_at"]}


def timeout_binding() -> dict[str, Any]:
    """The binding of a task whose deadline passed first."""
    return {"status": "timeout", "outcome": None, "data": None, "by": None,
            "completed_at": None}


async def run_ask(walker: Interpreter, step: Step, cur: dict[str, Any], names: Names,
                  path: str) -> Outcome:
    """Advance an ``ask`` step (see the module docstring for the order of precedence)."""
    ask = step.construct
    assert isinstance(ask, Ask)
    env = walker.env
    if "task" not in cur:
        _register(walker, ask, cur, names, path)
    completion = take_completion(env, cur, path)
    if completion is not None:
        return Done(completed_binding(completion))
    if env.now >= from_iso(cur["until"]):
        env.record("wait.timeout", path, until=cur["until"], task=cur["task"]["id"])
        return Done(timeout_binding())
    if ask.remind is not None and reminder_pending(cur, env.now):
        outcome = await remind(walker, ask.remind, cur, names, path,
                               waits=lambda: _waits(cur, path), task=cur["task"]["id"],
                               assign=cur["task"]["assign"])
        if outcome is not None:
            return outcome
    return Blocked(_waits(cur, path))


def _register(walker: Interpreter, ask: Ask, cur: dict[str, Any], names: Names,
              path: str) -> None:
    env = walker.env
    open_task(cur, title=_text(walker.render(ask.title, names)),
              details=None if ask.details is None else _text(walker.render(ask.details, names)),
              assign=_principals(walker.render(ask.assign, names)), form=ask.form,
              outcomes=list(ask.outcomes), now=env.now,
              until=walker.deadline(ask.timeout, names))
    note_calendar(walker, ask.timeout, cur, from_iso(cur["until"]))
    schedule_reminders(walker, ask.remind, cur, names)
    env.record("wait.registered", path, kind="task", until=cur["until"],
               task=cur["task"]["id"], assign=cur["task"]["assign"])


def open_task(cur: dict[str, Any], *, title: str, details: str | None, assign: list[str],
              form: dict[str, Any] | None, outcomes: list[str], now: datetime,
              until: datetime) -> None:
    """Keep a new task, with a fresh id, its deadline and its opening instant in ``cur``
    (a YAML step's private state, or a Python flow's journal entry)."""
    cur.update(task={"id": new_task_id(), "title": title, "details": details,
                     "assign": assign, "form": form, "outcomes": outcomes,
                     "created_at": iso(now)},
               until=iso(until), since=iso(now))
    cur.setdefault("reminders", 0)


def _text(value: Any) -> str:
    value = to_json(value)
    return value if isinstance(value, str) else str(value)


def _principals(value: Any) -> list[str]:
    """``assign`` rendered: principal names (None: anyone)."""
    if value is None:
        return []
    names = [value] if isinstance(value, str) else to_json(value)
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise ExpressionError(f"'assign' must give principal names (a list of non-empty "
                              f"strings), got {clip(repr(to_json(value)), 60)}")
    return names


def take_completion(env: Env, cur: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The completion of the task kept in ``cur``, if one was delivered (consumed)."""
    for delivered in env.inbox.pop(path, []):
        env.consumed.append(delivered["inbox_id"])
        if delivered["type"] == TASK_INBOX_TYPE and delivered["id"] == cur["task"]["id"]:
            data: dict[str, Any] = delivered["data"]
            return data
    return None


def task_request(cur: dict[str, Any], path: str) -> TaskRequest:
    """The task kept in ``cur`` by the step at ``path``, as the store keeps it."""
    task = cur["task"]
    return TaskRequest(id=task["id"], step=path, title=task["title"],
                       outcomes=tuple(task["outcomes"]), created_at=from_iso(task["created_at"]),
                       until=from_iso(cur["until"]), details=task["details"],
                       assign=tuple(task["assign"]), form=task["form"],
                       reminders=cur["reminders"])


def _waits(cur: dict[str, Any], path: str) -> tuple[WaitInfo, ...]:
    request = task_request(cur, path)
    return (WaitInfo("task", path, request.until, since=since(cur), task=request,
                     calendar=cur.get("calendar"), local=cur.get("until_local")),
            *reminder_waits(cur, path))

"""``ctx.ask``: a task for a person from a Python flow, the same task as the YAML ``ask``:
listed by ``tarry tasks`` and ``GET /v1/tasks``, completed by a person, bounded
by its deadline; its result is ``{status, outcome, data, by, completed_at}``, a value on
timeout as on completion.

The operation's journal entry keeps the task as the YAML step keeps it (``task``, ``until``,
``since``, ``reminders``) and, once decided, its ``outcome`` (the result).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from tarry.clock import from_iso
from tarry.engine.frames import since
from tarry.engine.outcome import WaitInfo
from tarry.engine.tasks import (
    completed_binding,
    open_task,
    take_completion,
    task_request,
    timeout_binding,
)
from tarry.language.fields import NAME_PATTERN
from tarry.language.schemas import schema_problem
from tarry.sdk.operations import FlowRun
from tarry.sdk.replay import Scope
from tarry.sdk.serializers import Codec
from tarry.sdk.strategies import as_duration

__all__ = ["ask", "deadline_of"]

_OUTCOME = re.compile(NAME_PATTERN)


async def ask(run: FlowRun, scope: Scope, name: str | None, *, title: str,
              outcomes: Sequence[str], timeout: timedelta | str | datetime,
              details: str | None = None, assign: Sequence[str] | None = None,
              form: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Open a task (once) and suspend until a person completes it or its deadline passes."""
    op = scope.enter("ask", name)
    entry = op.entry
    if entry is None:
        where = f"ask '{op.path}'"
        deadline = deadline_of(timeout, where)
        entry = op.record({})
        open_task(entry, title=_text(title, "title", where),
                  details=None if details is None else _text(details, "details", where),
                  assign=_assignees(assign, where), form=_form(form, where),
                  outcomes=_outcomes(outcomes, where), now=run.env.now,
                  until=deadline if isinstance(deadline, datetime) else run.env.now + deadline)
        run.record("step.started", op.path)
        run.record("wait.registered", op.path, kind="task", until=entry["until"],
                   task=entry["task"]["id"], assign=entry["task"]["assign"])
    if "outcome" not in entry:
        outcome = _decided(run, op.path, entry)
        if outcome is None:
            scope.suspend(WaitInfo("task", op.path, from_iso(entry["until"]),
                                   since=since(entry), task=task_request(entry, op.path)))
        entry["outcome"] = outcome
        run.record("step.completed", op.path)
    return dict(Codec.copy(entry["outcome"]))


def _decided(run: FlowRun, path: str, entry: dict[str, Any]) -> dict[str, Any] | None:
    completion = take_completion(run.env, entry, path)
    if completion is not None:
        return completed_binding(completion)
    if run.env.now >= from_iso(entry["until"]):
        run.record("wait.timeout", path, until=entry["until"], task=entry["task"]["id"])
        return timeout_binding()
    return None


def deadline_of(timeout: timedelta | str | datetime, where: str) -> timedelta | datetime:
    """A timeout given to an operation: an aware instant, or a duration from now."""
    if isinstance(timeout, datetime):
        if timeout.utcoffset() is None:
            raise ValueError(f"{where}: timeout must be a timezone-aware datetime")
        return timeout
    return as_duration(timeout, f"{where}: timeout")


def _text(value: Any, key: str, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{where}: {key} must be a non-empty string, got {value!r}")
    return value


def _outcomes(outcomes: Sequence[str], where: str) -> list[str]:
    names = list(outcomes) if not isinstance(outcomes, str) else []
    if not names or not all(isinstance(o, str) and _OUTCOME.fullmatch(o) for o in names):
        raise ValueError(f"{where}: outcomes must be a list of one or more names matching "
                         f"{NAME_PATTERN}, such as ['approve', 'reject'], got {outcomes!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: an outcome is listed twice in {names!r}")
    return names


def _assignees(assign: Sequence[str] | None, where: str) -> list[str]:
    if assign is None:
        return []
    names = [assign] if isinstance(assign, str) else list(assign)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"{where}: assign must be principal names such as ['ops', 'alice'], "
                         f"got {assign!r}")
    return names


def _form(form: Mapping[str, Any] | None, where: str) -> dict[str, Any] | None:
    if form is None:
        return None
    schema = Codec.plain(dict(form), f"the form of {where}")
    problem = schema_problem(schema)
    if problem is not None:
        raise ValueError(f"{where}: form is not a valid JSON Schema: {problem.message}")
    if schema.get("type", "object") != "object":
        raise ValueError(f"{where}: form must describe an object (type: object)")
    result: dict[str, Any] = schema
    return result

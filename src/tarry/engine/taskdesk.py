"""Listing and completing tasks for people: what the CLI, the API, the dashboard
and the test harness call, over the store alone (no flow needs to load).

A completion is checked in this order, and a refusal raises: the task must exist
(``TaskNotFound``), the principal must be among its assignees (``TaskForbidden``), the
outcome and data must fit (``InvalidTaskCompletion``, every reason), and the task must be
open with its deadline ahead (``TaskStateError``: a task completes once). Refusals for who or
what are recorded in the run's history (``task.refused``, with the principal); a completion
is recorded by the store with it (``task.completed``). A second completion changes nothing,
history included.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tarry.engine.taskforms import completion_problems, may_complete
from tarry.errors import InvalidTaskCompletion, InvalidValue, TaskForbidden
from tarry.model import HistoryEntry, TaskCompletion, TaskRecord, TaskState
from tarry.store.base import Store
from tarry.values import MIB, check_value

__all__ = ["complete_task", "list_tasks"]


def list_tasks(store: Store, *, state: TaskState | None = TaskState.OPEN,
               principal: str | None = None, limit: int = 100) -> list[TaskRecord]:
    """Tasks, newest first: open ones by default (``state=None``: every state); with
    ``principal``, only those that principal may complete."""
    found = store.list_tasks(state=state, limit=limit)
    return [task for task in found if principal is None or may_complete(task.request, principal)]


def complete_task(store: Store, now: datetime, task_id: str, *, outcome: Any, data: Any = None,
                  by: str, value_bytes: int = MIB,
                  checked: list[str] | None = None) -> TaskRecord:
    """Complete ``task_id`` at ``now`` as principal ``by`` with ``outcome`` and the form
    ``data`` (default: none; portable JSON of at most ``value_bytes``); the completed task.
    ``checked``, when given, is what :func:`completion_problems` says of the answer, found
    before. Refusals: see the module docstring."""
    task = store.get_task(task_id)
    answer = {} if data is None else data
    if not may_complete(task.request, by):
        refused = TaskForbidden(task.id, by, task.request.assign)
        _record_refusal(store, now, task, by, reason="forbidden", problems=[str(refused)])
        raise refused
    problems = _portability(answer, value_bytes) or (
        completion_problems(task.request, outcome, answer) if checked is None else checked)
    if problems and task.state is TaskState.OPEN:
        _record_refusal(store, now, task, by, reason="invalid", problems=problems)
        raise InvalidTaskCompletion(problems)
    return store.complete_task(TaskCompletion(task.id, outcome, answer, by, now))


def _portability(data: Any, value_bytes: int) -> list[str]:
    """Why ``data`` could not be stored (empty: it can)."""
    try:
        check_value(data, "the task's data", value_bytes)
    except InvalidValue as exc:
        return [str(exc)]
    return []


def _record_refusal(store: Store, now: datetime, task: TaskRecord, by: str, *, reason: str,
                    problems: list[str]) -> None:
    entry = HistoryEntry(now, "task.refused", task.request.step,
                         {"task": task.id, "by": by, "reason": reason, "problems": problems})
    store.append_history(task.run_id, [entry])

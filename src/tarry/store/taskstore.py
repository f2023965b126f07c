"""Tasks for people over named queries, the same statements on every SQL backend.

Every function runs inside the caller's transaction. A checkpoint keeps the table in step with
what its run waits on (:func:`settle_tasks`); a completion (:func:`complete`) records the
answer, puts it in the run's inbox under the asking step's path and wakes the run, all at
once, so an accepted completion is never lost and a task completes once. Locks are taken run
first, then task, as a checkpoint takes them, so the two never deadlock.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tarry.clock import from_millis, iso, to_millis
from tarry.errors import TaskNotFound, TaskStateError
from tarry.model import (
    TASK_INBOX_TYPE,
    HistoryEntry,
    RunUpdate,
    TaskCompletion,
    TaskRecord,
    TaskRequest,
    TaskState,
)
from tarry.store import rows
from tarry.store.rows import Row, stored_value

if TYPE_CHECKING:
    from tarry.store.sqlstore import Tx

__all__ = ["close_run_tasks", "complete", "find", "record_from_row", "settle_tasks"]


def settle_tasks(tx: Tx, update: RunUpdate, now: datetime) -> None:
    """On release, make the run's open tasks those of ``update``: open the new ones, count
    their reminders, and close the ones it no longer waits on."""
    if not update.release:
        return
    held = {row["id"]: row["reminders"]
            for row in tx.all("open_tasks_of_run", {"run_id": update.run_id})
            } if update.had_tasks else {}
    wanted = {task.id: task for task in update.tasks}
    tx.many("insert_task", [_task_params(update.run_id, task)
                            for task in wanted.values() if task.id not in held])
    tx.many("set_task_reminders", [{"id": task.id, "reminders": task.reminders}
                                   for task in wanted.values()
                                   if task.id in held and held[task.id] != task.reminders])
    tx.many("close_task", [{"id": task_id, "now": to_millis(now)}
                           for task_id in sorted(held.keys() - wanted.keys())])


def close_run_tasks(tx: Tx, run_id: str, now: datetime) -> None:
    """Close every open task of a run that stopped at once (cancelled)."""
    tx.run("close_run_tasks", {"run_id": run_id, "now": to_millis(now)})


def find(tx: Tx, task_id: str) -> TaskRecord:
    """The stored task; raises ``TaskNotFound``."""
    row = tx.one("get_task", {"id": task_id})
    if row is None:
        raise TaskNotFound(task_id)
    return record_from_row(row)


def complete(tx: Tx, completion: TaskCompletion) -> TaskRecord:
    """Record ``completion`` of an open task whose deadline has not passed, deliver it to the
    run and wake it; raises ``TaskNotFound`` or ``TaskStateError`` (nothing changed).

    Three flights to the server, the commit included: the task's run; the locks (the run's
    row, then the task's, as a checkpoint takes them) with the task as it is under them; the
    writes, the task as they leave it and the ``COMMIT``."""
    run_id = find(tx, completion.task_id).run_id
    tx.take("get_run_for_update", [{"id": run_id}])
    tx.take("lock_task", [{"id": completion.task_id}])
    task = find(tx, completion.task_id)  # as it is now that nobody else can change it
    _require_open(task, completion.at)
    tx.many("complete_task", [{"id": task.id, "outcome": completion.outcome,
                               "data": json.dumps(completion.data), "by": completion.by,
                               "at": to_millis(completion.at)}])
    delivered = {"outcome": completion.outcome, "data": completion.data, "by": completion.by,
                 "completed_at": iso(completion.at)}
    tx.many("insert_inbox", [{"run_id": run_id, "wait_id": task.request.step,
                              "event_type": TASK_INBOX_TYPE, "event_id": task.id,
                              "data": json.dumps(delivered),
                              "received_at": to_millis(completion.at)}])
    tx.many("wake_waiting_run", [{"run_id": run_id, "now": to_millis(completion.at)}])
    entry = HistoryEntry(completion.at, "task.completed", task.request.step,
                         {"task": task.id, "outcome": completion.outcome, "by": completion.by})
    tx.insert("insert_history", rows.history_params(run_id, [entry]))
    [completed] = tx.final("get_task", {"id": task.id})
    return record_from_row(completed)


def _require_open(task: TaskRecord, now: datetime) -> None:
    """Refuse a completion of a task that is not open, or whose deadline has passed."""
    done = task.completion
    if done is not None:
        raise TaskStateError(task.id, task.state.value,
                             f"task '{task.id}' was already completed by {done.by} at "
                             f"{iso(done.at)} ({done.outcome}); a task completes once")
    if task.state is TaskState.CANCELLED:
        raise TaskStateError(task.id, task.state.value,
                             f"task '{task.id}' was cancelled: its run no longer waits for it")
    if task.state is TaskState.TIMEOUT or now >= task.request.until:
        raise TaskStateError(task.id, TaskState.TIMEOUT.value,
                             f"task '{task.id}' timed out at {iso(task.request.until)}; it can "
                             "no longer be completed")


def _task_params(run_id: str, task: TaskRequest) -> dict[str, Any]:
    return {"id": task.id, "run_id": run_id, "step": task.step, "title": task.title,
            "details": task.details, "assign": json.dumps(list(task.assign)),
            "form": None if task.form is None else json.dumps(task.form),
            "outcomes": json.dumps(list(task.outcomes)), "created_at": to_millis(task.created_at),
            "until": to_millis(task.until), "reminders": task.reminders}


def record_from_row(row: Row) -> TaskRecord:
    """The task record of a stored row (joined with its run's flow and target)."""
    request = TaskRequest(
        id=row["id"], step=row["step"], title=row["title"],
        outcomes=tuple(stored_value(row["outcomes"])), created_at=from_millis(row["created_at"]),
        until=from_millis(row["until"]), details=row["details"],
        assign=tuple(stored_value(row["assign"])), form=stored_value(row["form"]),
        reminders=int(row["reminders"]))
    completion = None if row["completed_at"] is None else TaskCompletion(
        task_id=row["id"], outcome=row["outcome"], data=stored_value(row["data"]),
        by=row["completed_by"], at=from_millis(row["completed_at"]))
    return TaskRecord(request=request, run_id=row["run_id"], flow=row["flow"],
                      state=TaskState(row["state"]), target=row["target"],
                      completion=completion)

"""The run and event documents: the JSON shapes every interface prints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tarry.clock import iso
from tarry.engine import oplog
from tarry.engine.explain import explain_wait
from tarry.engine.journal import bindings_with
from tarry.engine.oplog import Shown
from tarry.engine.timings import step_timings
from tarry.model import (
    RETRIED,
    BatchRecord,
    EventRecord,
    EventState,
    HistoryEntry,
    JournalEntry,
    RunRecord,
    SlotView,
    TaskRecord,
)

__all__ = ["batch_document", "event_document", "history_document", "run_document",
           "task_document"]


def run_document(record: RunRecord, history: list[HistoryEntry] | None = None,
                 journal: Sequence[JournalEntry] = (), *,
                 reruns: Sequence[str] | None = None, continued_as: str | None = None,
                 children: Sequence[str] | None = None,
                 shown: Shown | None = None,
                 slots: SlotView | None = None) -> dict[str, Any]:
    """The run document of ``record``; with ``history`` when it is given, and then each
    step's timing, read from it (:func:`~tarry.engine.timings.step_timings`), the run's
    ``attempt`` (1, and one more per retry) and a Python run's ``journal`` of operations,
    their values shown as ``shown`` says (:func:`~tarry.engine.oplog.operations`); with
    ``reruns`` (the ids of its reruns) when they are given, and then ``continued_as`` (the
    run it continued as, or None); with ``children`` (of the child runs it started) when
    they are given. Its ``bindings`` are those in the
    run's state and in ``journal`` (the run's journal entries: a run keeps the bindings of
    completed steps there). A run waiting for a slot shows its place in the queue and the
    key's holders as of ``slots`` (read with :func:`tarry.engine.slots.slot_view`), when
    given."""
    document: dict[str, Any] = {
        "id": record.id,
        "flow": record.flow,
        "status": record.status.value,
        "exit": record.exit,
        "error": record.error,
        "reason": record.reason,
        "target": record.target,
        "inputs": record.inputs,
        "bindings": bindings_with(record.state, journal),
        "result": record.result,
        "waiting_for": None,
        "due_at": iso(record.due_at) if record.due_at else None,
        "created_at": iso(record.created_at),
        "updated_at": iso(record.updated_at),
        "rerun_of": record.rerun_of,
        "continued_from": record.continued_from,
        "parent": record.parent_id,
    }
    document["waiting_for"] = _waiting_for(document, record, slots)
    if reruns is not None:
        document["reruns"] = list(reruns)
        document["continued_as"] = continued_as
    if children is not None:
        document["children"] = list(children)
    if history is not None:
        document["steps"] = step_timings(history)
        operations = oplog.operations(record.state, journal, document["steps"],
                                      shown or Shown())
        if operations is not None:
            document["journal"] = operations
        document["attempt"] = 1 + sum(entry.kind == RETRIED for entry in history)
        document["history"] = history_document(history)
    return document


def _waiting_for(document: dict[str, Any], record: RunRecord,
                 slots: SlotView | None) -> dict[str, Any] | None:
    """What the run waits for, with its one-line ``explanation``; null once it has ended
    (whatever a state written before that rule still says)."""
    if record.waiting_for is None or record.status.is_terminal:
        return None
    waiting = {**record.waiting_for}
    if slots is not None and waiting.get("kind") == "slot":
        waiting.update(ahead=slots.ahead, holders=list(slots.holders), queued=slots.queued)
    waiting["explanation"] = explain_wait({**document, "waiting_for": waiting})
    return waiting


def history_document(history: list[HistoryEntry]) -> list[dict[str, Any]]:
    """History entries as ``{at, kind, step, data}`` objects."""
    return [{"at": iso(e.at), "kind": e.kind, "step": e.step, "data": e.data} for e in history]


def event_document(record: EventRecord) -> dict[str, Any]:
    """The event document of ``record``: what ``tarry send --json`` prints and
    ``tarry events --json`` lists. ``buffer_until`` is null unless the event is buffered;
    ``started`` lists the runs its event triggers started."""
    return {
        "id": record.id,
        "type": record.type,
        "state": record.state.value,
        "runs": list(record.runs),
        "started": list(record.started),
        "errors": list(record.errors),
        "data": record.data,
        "received_at": iso(record.received_at),
        "buffer_until": (iso(record.buffer_until) if record.buffer_until
                         and record.state is EventState.BUFFERED else None),
    }


def batch_document(batch: BatchRecord) -> dict[str, Any]:
    """The batch document: what ``POST /v1/runs/batch`` and ``GET /v1/batches/{id}`` return
    and the bulk ``tarry cancel`` and ``tarry retry`` print with ``--json``. ``total`` is how
    many runs the filter selected when the batch began; ``acted`` and ``skipped`` (runs that
    no longer qualified) advance as it works; ``state`` is ``running``, then ``done``."""
    selected = batch.filter
    return {
        "id": batch.id,
        "action": batch.action.value,
        "filter": {"flow": selected.flow,
                   "status": selected.status.value if selected.status else None,
                   "waiting_for": selected.waiting_for, "target": selected.target,
                   "created_before": (iso(selected.created_before)
                                      if selected.created_before else None)},
        "reason": batch.reason,
        "by": batch.by,
        "state": "done" if batch.done else "running",
        "total": batch.total,
        "acted": batch.acted,
        "skipped": batch.skipped,
        "created_at": iso(batch.created_at),
        "updated_at": iso(batch.updated_at),
    }


def task_document(record: TaskRecord) -> dict[str, Any]:
    """The task document of ``record``: what ``tarry tasks --json`` lists and
    ``GET /v1/tasks`` returns. ``outcome``, ``data``, ``by`` and ``completed_at`` are null
    until it is completed."""
    task, done = record.request, record.completion
    return {
        "id": task.id,
        "run": record.run_id,
        "flow": record.flow,
        "target": record.target,
        "step": task.step,
        "title": task.title,
        "details": task.details,
        "assign": list(task.assign),
        "form": task.form,
        "outcomes": list(task.outcomes),
        "state": record.state.value,
        "created_at": iso(task.created_at),
        "until": iso(task.until),
        "reminders": task.reminders,
        "outcome": done.outcome if done else None,
        "data": done.data if done else None,
        "by": done.by if done else None,
        "completed_at": iso(done.at) if done else None,
    }

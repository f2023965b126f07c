"""Records to query parameters and rows back to records, the same for every SQL backend.

Columns are portable: instants are integer epoch milliseconds (UTC), payloads are JSON text
(a backend storing JSONB hands the text back unparsed), booleans are whatever the driver
returns for them (``0``/``1`` or ``False``/``True``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from tarry.clock import from_millis, to_millis
from tarry.model import (
    CREATED,
    WAIT_KINDS,
    CheckpointOutcome,
    EncodedJSON,
    HistoryEntry,
    JournalEntry,
    NewRun,
    RunRecord,
    RunStatus,
    RunUpdate,
)
from tarry.values import TEXT_CHARS, bounded_texts, load_json, stored_text

__all__ = [
    "Row",
    "checkpoint_outcome",
    "claim_params",
    "claimed_record",
    "creation_params",
    "entry_from_row",
    "history_params",
    "history_params_of",
    "journal_entry",
    "journal_params",
    "json_text",
    "millis",
    "record_from_row",
    "run_filters",
    "stored_value",
    "update_params",
]

Row = Mapping[str, Any]
"""One result row, by column name."""


def run_filters(flow: str | None, target: str | None, waiting_for: str | None,
                at_step: str | None = None) -> dict[str, str | None]:
    """The filter parameters of ``list_runs`` and ``count_runs_per_status``: a wait kind,
    else an event type, for ``waiting_for``."""
    kind = waiting_for if waiting_for in WAIT_KINDS else None
    event = waiting_for if waiting_for is not None and kind is None else None
    return {"flow": flow, "target": target, "wait_kind": kind, "wait_event": event,
            "at_step": at_step}


def millis(instant: datetime | None) -> int | None:
    """The stored form of an optional instant."""
    return None if instant is None else to_millis(instant)


def creation_params(runs: Iterable[tuple[NewRun, Sequence[HistoryEntry]]]
                    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Parameters of ``insert_run`` and of ``insert_history`` for new runs, each with its
    first history entries.

    A run's ``created`` entry, when it is the first and dated at the run's creation (as every
    start writes it), is kept in the run's own row (``created_data``) rather than in
    ``history``: a start then writes one row, not two (``history`` reads it back first).
    """
    run_params: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    for run, entries in runs:
        created = _created_entry(run, entries)
        run_params.append(_new_run_params(run, None if created is None else created.data))
        history += history_params(run.id, entries[1:] if created is not None else entries)
    return run_params, history


def _created_entry(run: NewRun, entries: Sequence[HistoryEntry]) -> HistoryEntry | None:
    """The first of ``entries`` if it is the run's ``created`` entry, at its creation."""
    first = entries[0] if entries else None
    if (first is None or first.kind != CREATED or first.step is not None
            or to_millis(first.at) != to_millis(run.created_at)):
        return None
    return first


def _new_run_params(run: NewRun, created_data: Mapping[str, Any] | None) -> dict[str, Any]:
    return {
        "id": run.id,
        "flow": run.flow,
        "flow_digest": run.flow_digest,
        "status": run.status.value,
        "inputs": _dump(run.inputs if run.inputs_json is None else run.inputs_json),
        "target": run.target,
        "state": _dump(run.state),
        "reason": run.reason,
        "waiting_for": _dump(run.waiting_for),
        "due_at": millis(run.due_at),
        "created_at": to_millis(run.created_at),
        "created_data": _dump(created_data),
        "rerun_of": run.rerun_of,
        "continued_from": run.continued_from,
        "parent_id": run.parent_id,
        "parent_step": run.parent_step,
    }


def update_params(worker: str, now: datetime, update: RunUpdate) -> dict[str, Any]:
    """Parameters of ``checkpoint_run``.

    A terminal status always releases the lease and clears ``due_at``; otherwise ``release``
    decides between the update's ``due_at`` (lease given up) and the lease expiry (kept).
    """
    terminal = update.status.is_terminal
    return {
        "run_id": update.run_id,
        "worker": worker,
        "now": to_millis(now),
        "status": update.status.value,
        "state": _dump(update.state),
        "exit": update.exit,
        "error": _bounded(update.error),
        "reason": None if update.reason is None else stored_text(update.reason),
        "result": _dump(update.result),
        "waiting_for": _dump(update.waiting_for),
        "at_step": update.at_step,
        "release": update.release or terminal,
        "due_at": None if terminal else millis(update.due_at),
    }


def checkpoint_outcome(update: RunUpdate, cancel_requested: bool) -> CheckpointOutcome:
    """What a saved update tells its worker: a cancel request matters only to a run that
    has not just ended; one that suspends the run is carried out at once (``CANCELLED``)."""
    if not cancel_requested or update.status.is_terminal:
        return CheckpointOutcome.SAVED
    return CheckpointOutcome.CANCELLED if update.release else CheckpointOutcome.CANCEL_REQUESTED


def history_params(run_id: str, entries: Sequence[HistoryEntry]) -> list[dict[str, Any]]:
    """Parameters of ``insert_history``, one mapping per entry."""
    return [
        {
            "run_id": run_id,
            "at": to_millis(entry.at),
            "kind": entry.kind,
            "step": entry.step,
            "data": _bounded(entry.data),
        }
        for entry in entries
    ]


def history_params_of(run_ids: Sequence[str], entry: HistoryEntry) -> list[dict[str, Any]]:
    """Parameters of ``insert_history``: the same entry for each run of ``run_ids``."""
    return [params for run_id in run_ids for params in history_params(run_id, [entry])]


def journal_params(run_id: str, entries: Sequence[JournalEntry]) -> list[dict[str, Any]]:
    """Parameters of ``insert_journal``, one mapping per entry."""
    return [{"run_id": run_id, "scope": entry.scope, "key": entry.key,
             "value": _dump(entry.value)} for entry in entries]


def journal_entry(row: Row) -> JournalEntry:
    """A ``run_journal`` row as a :class:`JournalEntry`."""
    return JournalEntry(row["scope"], row["key"], stored_value(row["value"]))


def journal_entries(found: Sequence[Row]) -> list[JournalEntry]:
    """``run_journal`` rows as :class:`JournalEntry` values, in order. Their values' texts
    are decoded together, as one JSON array: a resume reads a Python run's whole journal, and
    one decode of 10,000 values costs a fifth of 10,000 decodes of one."""
    texts = [row["value"] for row in found]
    if not all(isinstance(text, str) for text in texts):
        return [journal_entry(row) for row in found]
    values = stored_value("[" + ",".join(texts) + "]")
    return [JournalEntry(row["scope"], row["key"], value)
            for row, value in zip(found, values, strict=True)]


def record_from_row(row: Row) -> RunRecord:
    """A ``runs`` row as a :class:`RunRecord`."""
    return _record(row, row["status"], row["due_at"])


def _record(row: Row, status: str, due_at: int | None) -> RunRecord:
    return RunRecord(
        id=row["id"],
        flow=row["flow"],
        flow_digest=row["flow_digest"],
        status=RunStatus(status),
        inputs=stored_value(row["inputs"]),
        target=row["target"],
        state=stored_value(row["state"]),
        created_at=from_millis(row["created_at"]),
        updated_at=from_millis(row["updated_at"]),
        due_at=_instant(due_at),
        exit=row["exit"],
        error=stored_value(row["error"]),
        reason=row["reason"],
        result=stored_value(row["result"]),
        waiting_for=stored_value(row["waiting_for"]),
        lease_owner=row["lease_owner"],
        cancel_requested=bool(row["cancel_requested"]),
        cancelled_by=row["cancelled_by"],
        recoveries=row["recoveries"],
        rerun_of=row["rerun_of"],
        continued_from=row["continued_from"],
        parent_id=row["parent_id"],
    )


def claim_params(limit: int, now: datetime, ahead: datetime | None) -> dict[str, int]:
    """The parameters of a claim of up to ``limit`` runs due by ``now`` and, with ``ahead``,
    of those nothing can reach due by then (never before ``now``)."""
    return {"limit": limit, "ahead": to_millis(max(ahead or now, now))}


def claimed_record(row: Row, previous_status: str, was_due: int) -> RunRecord:
    """A run just leased: as stored, but with the status it had before the claim (so the
    worker knows whether it starts, resumes or recovers it) and the instant it was due (so
    the worker runs one claimed ahead at its instant)."""
    return _record(row, previous_status, was_due)


def entry_from_row(row: Row) -> HistoryEntry:
    """A ``history`` row as a :class:`HistoryEntry`."""
    return HistoryEntry(at=from_millis(row["at"]), kind=row["kind"], step=row["step"],
                        data=stored_value(row["data"]))


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""One encoder for every stored value (``json.dumps`` with options builds one per call)."""


def json_text(value: Any) -> str:
    """``value`` as the JSON text a store writes: as it is when already encoded
    (:class:`EncodedJSON`), else compact."""
    if isinstance(value, EncodedJSON):
        return value
    return _ENCODER.encode(value) if value != {} else "{}"


def _dump(value: Any) -> str | None:
    return None if value is None else json_text(value)


def _bounded(value: Any) -> str | None:
    """What :func:`_dump` writes, every text in it within :data:`TEXT_CHARS` characters (a
    history entry's details, a run's error: no text a run produces can grow them)."""
    text = _dump(value)
    if text is None or len(text) <= TEXT_CHARS:  # no text inside can be longer
        return text
    return json_text(bounded_texts(value))


def stored_value(value: Any) -> Any:
    """A JSON column's value: its text read with :func:`tarry.values.load_json` (as every
    store returns it), or the value itself when the driver already gave one (None, say)."""
    return load_json(value) if isinstance(value, str | bytes) else value


def _instant(value: int | None) -> datetime | None:
    return None if value is None else from_millis(value)

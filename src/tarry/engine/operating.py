"""Operating runs: retry a failed run, and bulk actions over the runs a filter
selects; what the CLI, the API and the dashboard call, through :class:`~tarry.engine.runtime.
Engine`.

A retry is decided here and written by the store: :func:`retry_plan` (pure) takes the failed
run as it was read and makes its state ready to run the failed step again
(:mod:`tarry.engine.retrying`), with its inputs corrected; the store writes it only if the run
is still that failed run, so two retries at once retry it once.

A batch is recorded with its filter and the count it selects, then worked through in pages of
:data:`BATCH_PAGE` runs, one short transaction each (:meth:`Store.work_batch`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from tarry.engine.retrying import rearm
from tarry.engine.starting import new_run_id
from tarry.errors import InvalidRunRequest, RunStateError
from tarry.language.inputs import bind_inputs
from tarry.language.model import Flow
from tarry.model import (
    RETRIED,
    BatchAction,
    BatchFilter,
    BatchRecord,
    HistoryEntry,
    JournalEntry,
    RetryPlan,
    RunRecord,
    RunStatus,
)
from tarry.store.base import RetryPlanner, Store
from tarry.values import ValueLimits, check_key, check_value

__all__ = ["BATCH_PAGE", "REASON_BYTES", "REST", "checked_reason", "count_batch", "new_batch",
           "planner", "retry", "retry_plan", "start_batch", "work_batch"]

BATCH_PAGE = 200
"""How many runs one transaction of a batch acts on: short enough that a batch over 100,000
runs never holds the store's lock for long, so the timers due meanwhile wake on time."""

REST = 1.0
"""After each page a batch rests this many times as long as the page took, so the store is
free for others at least half the time: SQLite's write lock goes to whoever asks first once
it is released, and a batch that asked again at once would keep it from a worker polling
for it (its timers then wake late). A short page rests briefly: the batch stays quick."""

REASON_BYTES = 1024
"""The longest reason an operator may give, and the longest text of a batch's filter (UTF-8
bytes)."""


def checked_reason(reason: str | None) -> str | None:
    """An operator's reason, checked as every stored text is (None or blank: none)."""
    text = (reason or "").strip()
    return _bounded(text, "a reason", "the reason") if text else None


def _bounded(text: str, noun: str, what: str) -> str:
    """``text``, refused when it is over :data:`REASON_BYTES` or not portable (a NUL, a lone
    surrogate): it is stored as it is."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > REASON_BYTES:
        raise InvalidRunRequest(f"{noun} is at most {REASON_BYTES:,} bytes; this one has "
                                f"{size:,}: shorten it")
    check_key(text, what, REASON_BYTES)
    return text


def retry(store: Store, now: datetime, run_id: str, *, by: str, reason: str | None = None,
          inputs: Mapping[str, Any] | None = None,
          flow_of: Callable[[str], Flow] | None = None,
          limits: ValueLimits | None = None) -> RunRecord:
    """Retry the failed run ``run_id`` as ``by`` (see :func:`retry_plan`); ``flow_of`` finds
    the definition a run started with by its digest (needed for corrected ``inputs``).
    Raises ``RunStateError`` when the run has not failed, or changed while it was being
    retried."""
    record = store.get_run(run_id)
    failed = record.status is RunStatus.FAILED
    journal = store.journals([run_id]).get(run_id, []) if failed else []
    flow = flow_of(record.flow_digest) if failed and inputs and flow_of else None
    plan = retry_plan(record, journal, by=by, reason=checked_reason(reason), now=now,
                      inputs=inputs, flow=flow, limits=limits)
    [retried] = store.retry_runs([plan], now)
    if retried is None:
        raise RunStateError(run_id, RunStatus.FAILED.value,
                            f"run {run_id} changed while it was being retried (another "
                            "retry came first); look at it again")
    return retried


def retry_plan(record: RunRecord, journal: list[JournalEntry], *, by: str,
               reason: str | None, now: datetime, inputs: Mapping[str, Any] | None = None,
               flow: Flow | None = None, limits: ValueLimits | None = None) -> RetryPlan:
    """How to retry the failed run ``record`` (its ``journal`` read with it) as ``by``, for
    ``reason``; ``inputs`` replace the run's inputs of the same names (checked against
    ``flow``, the definition the run started with). Raises ``RunStateError`` for a run that
    has not failed, and ``InvalidRunRequest`` for inputs the flow does not take."""
    if record.status is not RunStatus.FAILED:
        raise RunStateError(record.id, record.status.value,
                            f"run {record.id} is {record.status}: only a failed run can be "
                            "retried (rerun starts a new run of any run)")
    rearmed = rearm(record.state, record.error, journal)
    corrected = dict(record.inputs)
    if inputs:
        assert flow is not None, "corrected inputs are checked against the run's flow"
        corrected = bind_inputs(flow, {**record.inputs, **inputs})
        check_value(corrected, "the run's inputs", (limits or ValueLimits()).value_bytes)
    data: dict[str, Any] = {"by": by}
    if reason:
        data["reason"] = reason
    if inputs:
        data["inputs"] = sorted(inputs)
    return RetryPlan(record.id, record.updated_at, rearmed.state, corrected,
                     HistoryEntry(now, RETRIED, None, data), rearmed.forget)


def planner(*, by: str, reason: str | None, now: datetime) -> RetryPlanner:
    """The retry plan of each failed run a batch selects (a run that cannot be retried is
    left alone and counted as skipped)."""
    return functools.partial(_plan_or_skip, by=by, reason=reason, now=now)


def _plan_or_skip(record: RunRecord, journal: list[JournalEntry], *, by: str,
                  reason: str | None, now: datetime) -> RetryPlan | None:
    try:
        return retry_plan(record, journal, by=by, reason=reason, now=now)
    except RunStateError:
        return None


def start_batch(store: Store, now: datetime, action: BatchAction, selected: BatchFilter, *,
                by: str, reason: str | None = None) -> BatchRecord:
    """Record a batch of ``action`` over the runs ``selected`` (with its count); work it with
    :func:`work_batch`."""
    return store.create_batch(new_batch(action, selected, by=by, reason=checked_reason(reason),
                                        now=now))


def count_batch(store: Store, now: datetime, action: BatchAction,
                selected: BatchFilter) -> int:
    """How many runs a batch of ``action`` over ``selected`` would act on now."""
    return store.count_batch(new_batch(action, selected, by="", reason=None, now=now))


def work_batch(store: Store, now: datetime, batch_id: str) -> BatchRecord:
    """Act on the next page of a batch's runs (one transaction); the batch as written."""
    batch = store.get_batch(batch_id)
    return store.work_batch(batch_id, now, limit=BATCH_PAGE,
                            plan=planner(by=batch.by, reason=batch.reason, now=now))


def new_batch(action: BatchAction, selected: BatchFilter, *, by: str, reason: str | None,
              now: datetime) -> BatchRecord:
    """A batch of ``action`` over the runs ``selected`` created before ``now`` (and before
    the filter's ``created_before``), not yet recorded (its ``total`` is counted then)."""
    for name in ("flow", "target", "waiting_for"):
        value = getattr(selected, name)
        if value is not None:  # stored with the batch: bounded, as every stored text
            _bounded(value, f"the filter's {name}", f"the filter's {name}")
    if selected.status is not None and not selected.statuses(action):
        allowed = ", ".join(status.value for status in action.statuses)
        raise InvalidRunRequest(f"a {action} acts on runs that are {allowed}; a filter on "
                                f"status {selected.status} selects none of them")
    first = now + timedelta(milliseconds=1)
    if selected.created_before is not None:
        first = min(first, selected.created_before)
    return BatchRecord(id=new_run_id(), action=action, filter=selected, reason=reason, by=by,
                       total=0, created_at=now, updated_at=now, cursor=(first, ""))

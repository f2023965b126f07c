"""The commands that operate runs: ``cancel``, ``retry`` and ``rerun``.

``cancel`` and ``retry`` act on the runs named, or on every run the run list's filters
select (``--flow``, ``--status``, ``--waiting-for``, ``--target``, ``--older-than``): then
``--dry-run`` prints how many that is, and ``--yes`` acts on them, as a batch worked through
in short transactions; without either nothing happens. ``cancel`` and a ``retry`` without
corrected inputs need only the store, so a broken flow file never stands between an operator
and the runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

import typer

from tarry.cli import render
from tarry.cli.options import (
    WaitingFilter,
    choice,
    current_user,
    parse_inputs,
    quoting_hints,
)
from tarry.cli.runs import shown_values
from tarry.cli.session import console, note, open_engine, open_run_store, print_json, resolve_run_id
from tarry.clock import SystemClock
from tarry.config import load_settings
from tarry.engine import operating
from tarry.engine.documents import batch_document, run_document
from tarry.errors import InvalidRunRequest
from tarry.language.durations import parse_duration
from tarry.model import BatchAction, BatchFilter, RunRecord, RunStatus
from tarry.store.base import Store

__all__ = ["cancel", "rerun", "retry"]

RunsArgument = Annotated[list[str] | None, typer.Argument(
    metavar="RUN", show_default=False,
    help="Run ids (or the start of one), or none with filters.")]
ReasonOption = Annotated[str | None, typer.Option(
    "--reason", metavar="R", help="Why (recorded in the run's history).")]
InputOption = Annotated[list[str] | None, typer.Option(
    "-i", "--input", metavar="NAME=VALUE",
    help="An input; the value is read as JSON when it parses (3, true, {...}), else as text.")]
FlowFilter = Annotated[str | None, typer.Option(
    "--flow", metavar="F", help="Every run of this flow.")]
StatusFilter = Annotated[RunStatus | None, typer.Option(
    "--status", metavar="S", parser=choice(RunStatus, "a status"),
    help="Only runs with this status.")]
TargetFilter = Annotated[str | None, typer.Option(
    "--target", metavar="T", help="Only runs with this target.")]
OlderFilter = Annotated[str | None, typer.Option(
    "--older-than", metavar="D", help="Only runs created longer ago than D (such as 2h, 7d).")]
DryRunOption = Annotated[bool, typer.Option(
    "--dry-run", help="With filters: print how many runs they select, and act on none.")]
YesOption = Annotated[bool, typer.Option(
    "--yes", help="With filters: act on every run they select.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


@dataclass(frozen=True)
class _Bulk:
    """What a command was asked to act on in bulk: the filter, and how."""

    selected: BatchFilter | None
    dry_run: bool
    yes: bool


def cancel(runs: RunsArgument = None, *, reason: ReasonOption = None, flow: FlowFilter = None,
           status: StatusFilter = None, waiting_for: WaitingFilter = None,
           target: TargetFilter = None, older_than: OlderFilter = None,
           dry_run: DryRunOption = False, yes: YesOption = False,
           as_json: JsonOption = False) -> None:
    """Cancel runs: at once unless running, then at their next checkpoint; or, with
    filters, every run they select (--dry-run counts them, --yes cancels them)."""
    bulk = _bulk(runs, flow=flow, status=status, waiting_for=waiting_for, target=target,
                 older_than=older_than, dry_run=dry_run, yes=yes)
    with open_run_store() as store:
        if bulk.selected is not None:
            _act_in_bulk(store, BatchAction.CANCEL, bulk, reason, as_json)
            return
        for given in runs or []:
            found = resolve_run_id(store, given)
            record = store.cancel(found, current_user(), SystemClock().now(),
                                  reason=operating.checked_reason(reason))
            _print_run(store, record, as_json,
                       "; cancel requested, it stops at its next checkpoint"
                       if record.status is RunStatus.RUNNING else "")


def retry(runs: RunsArgument = None, *, input_pairs: InputOption = None,
          reason: ReasonOption = None, flow: FlowFilter = None, status: StatusFilter = None,
          waiting_for: WaitingFilter = None, target: TargetFilter = None,
          older_than: OlderFilter = None, dry_run: DryRunOption = False,
          yes: YesOption = False, as_json: JsonOption = False) -> None:
    """Retry failed runs from the step that failed (a worker resumes them), with -i
    correcting inputs; or, with filters, every failed run they select."""
    bulk = _bulk(runs, flow=flow, status=status, waiting_for=waiting_for, target=target,
                 older_than=older_than, dry_run=dry_run, yes=yes)
    if bulk.selected is not None and input_pairs:
        raise typer.BadParameter("corrected inputs (-i) go with run ids, not with filters")
    if bulk.selected is not None:
        with open_run_store() as store:
            _act_in_bulk(store, BatchAction.RETRY, bulk, reason, as_json)
        return
    inputs = parse_inputs(input_pairs or [], None)
    if inputs:  # checked against the definition each run started with
        with open_engine() as engine:
            _retry_each(engine.store, runs or [], lambda run_id: engine.retry(
                run_id, by=current_user(), reason=reason, inputs=inputs), as_json,
                input_pairs or [])
        return
    with open_run_store() as store:
        _retry_each(store, runs or [], lambda run_id: operating.retry(
            store, SystemClock().now(), run_id, by=current_user(), reason=reason), as_json, [])


def rerun(run: Annotated[str, typer.Argument(
              metavar="RUN", help="A run id, or the start of one that no other run's id "
                                  "starts with.")],
          *, input_pairs: InputOption = None, as_json: JsonOption = False) -> None:
    """Start a new run of the same flow (its current definition) with the same inputs and
    target, -i replacing inputs; print the new run's id. A worker executes it."""
    with open_engine() as engine:
        found = resolve_run_id(engine.store, run)
        pairs = input_pairs or []
        try:
            record = engine.rerun(found, inputs=parse_inputs(pairs, None))
        except InvalidRunRequest as exc:
            raise InvalidRunRequest(quoting_hints(pairs, exc.problems)) from None
        document = engine.document(record.id) if as_json else None
    if document is not None:
        print_json(document)
        return
    typer.echo(record.id)
    note(f"a rerun of {found}; a worker (tarry worker) executes it")


def _retry_each(store: Store, runs: list[str], retry_one: Callable[[str], RunRecord],
                as_json: bool, pairs: list[str]) -> None:
    for given in runs:
        found = resolve_run_id(store, given)
        try:
            record = retry_one(found)
        except InvalidRunRequest as exc:
            raise InvalidRunRequest(quoting_hints(pairs, exc.problems)) from None
        _print_run(store, record, as_json, "; retried, a worker resumes it at the step that "
                                           "failed")


def _print_run(store: Store, record: RunRecord, as_json: bool, suffix: str) -> None:
    journal = store.journals([record.id]).get(record.id, [])
    document = run_document(record, store.history(record.id) if as_json else None, journal,
                            shown=shown_values(load_settings()))
    if as_json:
        print_json(document)
    else:
        typer.echo(render.summary_line(document) + suffix)


def _bulk(runs: list[str] | None, *, flow: str | None, status: RunStatus | None,
          waiting_for: str | None, target: str | None, older_than: str | None,
          dry_run: bool, yes: bool) -> _Bulk:
    """The filter the options give (None: act on the runs named), checked."""
    filtered = any(value is not None for value in (flow, status, waiting_for, target,
                                                   older_than))
    if runs and filtered:
        raise typer.BadParameter("give run ids or filters, not both")
    if not runs and not filtered:
        raise typer.BadParameter("give a run id, or filters (--flow, --status, --waiting-for, "
                                 "--target, --older-than) to act on every run they select")
    if not filtered:
        if dry_run or yes:
            raise typer.BadParameter("--dry-run and --yes go with filters, not with run ids")
        return _Bulk(None, dry_run, yes)
    before = None
    if older_than is not None:
        try:
            before = SystemClock().now() - parse_duration(older_than)
        except ValueError as exc:
            raise typer.BadParameter(f"--older-than: {exc}") from None
    return _Bulk(BatchFilter(flow=flow, status=status, waiting_for=waiting_for, target=target,
                             created_before=before), dry_run, yes)


_DONE = {BatchAction.CANCEL: "cancelled", BatchAction.RETRY: "retried"}


def _act_in_bulk(store: Store, action: BatchAction, bulk: _Bulk, reason: str | None,
                 as_json: bool) -> None:
    assert bulk.selected is not None
    now = SystemClock().now()
    if not bulk.yes:
        count = operating.count_batch(store, now, action, bulk.selected)
        if not bulk.dry_run:
            typer.echo(f"error: this would {action} {_runs(count)}; add --yes to do it, or "
                       "--dry-run to only count them", err=True)
            raise typer.Exit(2)
        if as_json:
            print_json({"action": action.value, "count": count})
        else:
            typer.echo(f"{_runs(count)} would be {_DONE[action]} (dry run: nothing changed)")
        return
    batch = operating.start_batch(store, now, action, bulk.selected, by=current_user(),
                                  reason=reason)
    while not batch.done:
        began = time.perf_counter()
        batch = operating.work_batch(store, SystemClock().now(), batch.id)
        time.sleep((time.perf_counter() - began) * operating.REST)
    if as_json:
        print_json(batch_document(batch))
        return
    skipped = f" ({batch.skipped} skipped: they changed meanwhile)" if batch.skipped else ""
    console().print(f"{_DONE[action]} {_runs(batch.acted)}{skipped}; batch {batch.id}")


def _runs(count: int) -> str:
    return f"{count:,} run" + ("" if count == 1 else "s")


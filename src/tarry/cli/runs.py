"""The commands about runs: ``run``, ``start``, ``runs`` and ``show`` (``cancel``, ``retry``
and ``rerun``: :mod:`tarry.cli.operate`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from rich.console import Console

from tarry import eventloop
from tarry._suggest import did_you_mean
from tarry.cli import render
from tarry.cli.holds import HoldAfterOption, hold_after
from tarry.cli.layout import PlainCommand, PlainGroup
from tarry.cli.moves import migrate_runs
from tarry.cli.options import WaitingFilter, choice, parse_inputs, quoting_hints
from tarry.cli.session import (
    console,
    note,
    open_engine,
    open_run_store,
    print_json,
    print_listing,
    resolve_run_id,
)
from tarry.config import Settings, load_settings
from tarry.engine.documents import history_document, run_document
from tarry.engine.oplog import Shown
from tarry.engine.runtime import Engine
from tarry.engine.slots import slot_view
from tarry.errors import InvalidRunRequest, StoreMissing
from tarry.language.manifests import load_manifests
from tarry.model import WAIT_KINDS, RunRecord, RunStatus
from tarry.secrets import Redactor
from tarry.store.base import Store

__all__ = ["exit_code", "list_runs", "run", "runs_app", "show", "shown_values", "start"]

FlowArgument = Annotated[str, typer.Argument(
    metavar="FLOW", help="A flow name (a YAML flow of the flows folder, or a Python flow of the "
                         "app that [tarry] app names) or the path of a YAML flow file.")]
InputOption = Annotated[list[str] | None, typer.Option(
    "-i", "--input", metavar="NAME=VALUE",
    help="An input; the value is read as JSON when it parses (3, true, {...}), else as text.")]
InputsOption = Annotated[str | None, typer.Option(
    "--inputs", metavar="JSON", help="Inputs as one JSON object; each -i overrides its key.")]
TargetOption = Annotated[str | None, typer.Option(
    "--target", metavar="T", help="A label for the run, such as acme/web#7.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
RunArgument = Annotated[str, typer.Argument(
    metavar="RUN", help="A run id, or the start of one that no other run's id starts with.")]

_UNSUCCESSFUL = frozenset({RunStatus.FAILED, RunStatus.REFUSED, RunStatus.CANCELLED})


def exit_code(status: str) -> int:
    """1 when the run failed, was refused or was cancelled; else 0."""
    return 1 if RunStatus(status) in _UNSUCCESSFUL else 0


def run(flow: FlowArgument, *, input_pairs: InputOption = None, inputs: InputsOption = None,
        target: TargetOption = None, hold_after_text: HoldAfterOption = None,
        follow: Annotated[bool, typer.Option(
            "--follow", help="Keep executing the run, showing progress, until it ends.")] = False,
        as_json: JsonOption = False) -> None:
    """Start a run and execute it in this process until it ends or suspends."""
    with open_engine(flow=flow) as engine:
        run_id = _start(engine, flow, input_pairs or [], inputs, target=target,
                        hold_after_text=hold_after_text).id
        progress = _Progress(engine.store, run_id, console()) if follow and not as_json else None
        eventloop.run(engine.drive(run_id, follow=follow, on_progress=progress))
        if progress is not None:
            progress.flush()
        doc = engine.document(run_id)
    if as_json:
        print_json(doc)
    else:
        _report(doc)
    raise typer.Exit(exit_code(doc["status"]))


def _report(doc: Mapping[str, Any]) -> None:
    out = console()
    out.print(render.summary_line(doc))
    if doc.get("result") is not None:  # a Python flow's return value
        out.print(f"result: {json.dumps(doc['result'], ensure_ascii=False)}")
    explanation = render.explain_wait(doc)
    if explanation:
        out.print(explanation)
    if doc["status"] in (RunStatus.WAITING, RunStatus.HELD):
        note("the run is saved; a worker (tarry worker) resumes it when it is due")


class _Progress:
    """Prints the run's history entries as they appear (the ``--follow`` progress lines)."""

    def __init__(self, store: Store, run_id: str, out: Console) -> None:
        self.store = store
        self.run_id = run_id
        self.out = out
        self.printed = 0

    def __call__(self, _record: RunRecord) -> None:
        self.flush()

    def flush(self) -> None:
        """Print the entries not printed yet."""
        entries = history_document(self.store.history(self.run_id))
        for entry in entries[self.printed:]:
            self.out.print(render.progress_line(entry))
        self.printed = len(entries)


def start(flow: FlowArgument, *, input_pairs: InputOption = None, inputs: InputsOption = None,
          target: TargetOption = None, hold_after_text: HoldAfterOption = None,
          as_json: JsonOption = False) -> None:
    """Create a run only (print its id); a worker executes it. A run refused at its start
    (its hold) exits 1."""
    with open_engine(flow=flow) as engine:
        record = _start(engine, flow, input_pairs or [], inputs, target=target,
                        hold_after_text=hold_after_text)
        doc = engine.document(record.id) if as_json else None
    if doc is not None:
        print_json(doc)
    else:
        typer.echo(record.id)
    if record.status is RunStatus.REFUSED:
        note(f"refused: {record.reason}")
        raise typer.Exit(1)


def _start(engine: Engine, flow: str, pairs: list[str], inputs: str | None, *,
           target: str | None, hold_after_text: str | None) -> RunRecord:
    """Start a run; inputs refused say how to pass an ``-i`` value that JSON misread."""
    given = parse_inputs(pairs, inputs)
    try:
        return engine.start(flow, given, target=target, hold_after=hold_after(hold_after_text))
    except InvalidRunRequest as exc:
        raise InvalidRunRequest(quoting_hints(pairs, exc.problems)) from None


runs_app = typer.Typer(
    name="runs", cls=PlainGroup, no_args_is_help=False, add_completion=False,
    pretty_exceptions_enable=False, rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="List runs, newest first; move waiting runs to a new definition (migrate).")


@runs_app.callback(invoke_without_command=True)
def list_runs(
        ctx: typer.Context, *,
        status: Annotated[RunStatus | None, typer.Option(
            "--status", metavar="S", parser=choice(RunStatus, "a status"),
            help="Only runs with this status: " + ", ".join(RunStatus) + ".")] = None,
        flow: Annotated[str | None, typer.Option(
            "--flow", metavar="F", help="Only runs of this flow.")] = None,
        at_step: Annotated[str | None, typer.Option(
            "--at-step", metavar="STEP",
            help="Only runs waiting or failed at this step of their flow (step ids joined by "
                 "dots, without loop indices: quotes.request).")] = None,
        waiting_for: WaitingFilter = None,
        limit: Annotated[int, typer.Option(
            "--limit", metavar="N", min=1, help="At most N runs, newest first.")] = 50,
        as_json: JsonOption = False) -> None:
    """List runs, newest first (50 unless --limit says otherwise, and how many more exist)."""
    if ctx.invoked_subcommand is not None:
        return
    nothing = "no runs"
    _check_wait_filter(waiting_for)
    try:
        docs, total = _newest_runs(_Filters(status, flow, at_step, waiting_for), limit)
    except StoreMissing as exc:
        docs, total, nothing = [], 0, f"no runs: {exc}"
    print_listing(docs, render.runs_table, as_json=as_json, nothing=nothing)
    if total > len(docs):
        note(f"{len(docs)} of {total} runs shown; --limit N shows more")


runs_app.command("migrate", cls=PlainCommand)(migrate_runs)


def _check_wait_filter(waiting_for: str | None) -> None:
    """Refuse a ``--waiting-for`` that is neither a kind of wait nor a declared event type
    (it could only select nothing: most likely a misspelling)."""
    if waiting_for is None or waiting_for in WAIT_KINDS:
        return
    declared = load_manifests(load_settings().event_files)
    if waiting_for not in declared:
        raise typer.BadParameter(
            f"'{waiting_for}' is neither a kind of wait ({', '.join(sorted(WAIT_KINDS))}) nor "
            f"a declared event type{did_you_mean(waiting_for, [*WAIT_KINDS, *declared])}",
            param_hint="'--waiting-for'")


@dataclass(frozen=True)
class _Filters:
    """What ``tarry runs`` was asked to list."""

    status: RunStatus | None
    flow: str | None
    at_step: str | None
    waiting_for: str | None


def _newest_runs(filters: _Filters, limit: int) -> tuple[list[dict[str, Any]], int]:
    """The newest ``limit`` run documents, and how many runs the filters select in all."""
    with open_run_store() as store:
        records = store.list_runs(status=filters.status, flow=filters.flow,
                                  at_step=filters.at_step, waiting_for=filters.waiting_for,
                                  limit=limit)
        journals = store.journals([record.id for record in records])
        docs = [run_document(record, None, journals.get(record.id, [])) for record in records]
        total = len(docs) if len(docs) < limit else _count(store, filters)
    return docs, total


def _count(store: Store, filters: _Filters) -> int:
    if filters.at_step is None and filters.waiting_for is None:
        return store.count_runs(status=filters.status, flow=filters.flow)
    counts = store.count_runs_per_status(flow=filters.flow, at_step=filters.at_step,
                                         waiting_for=filters.waiting_for)
    return (counts.get(filters.status, 0) if filters.status is not None
            else sum(counts.values()))


def show(run_id: RunArgument, as_json: JsonOption = False) -> None:
    """One run: status, exit, what it waits for, bindings and history."""
    settings = load_settings()
    with open_run_store(settings) as store:
        found = resolve_run_id(store, run_id)
        record = store.get_run(found)
        doc = run_document(record, store.history(found),
                           store.journals([found]).get(found, []), reruns=store.reruns(found),
                           children=store.children(found),
                           continued_as=store.continued_as(found), shown=shown_values(settings),
                           slots=slot_view(store, record))
    if as_json:
        print_json(doc)
    else:
        render.show_run(console(), doc)


def shown_values(settings: Settings) -> Shown:
    """How a run's journal shows values: ``[limits] shown_bytes``, the environment's secrets
    masked (the commands about runs read no event manifest, so not the signing secrets)."""
    return Shown(settings.limits.shown_bytes, Redactor.from_environment())

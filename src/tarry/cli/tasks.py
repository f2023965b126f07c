"""The commands about tasks for people: ``tasks`` (the inbox) and ``tasks complete``.

The command line acts as a principal: ``--as NAME``, by default the OS user name (the same
name ``tarry cancel`` records). A task with ``assign`` can be completed only by one of the
principals it names, whoever runs the command.

Exit codes: 0 when the task was completed; 1 when it was refused (no such task, not assigned
to the principal, an outcome or data that does not fit, already completed or past its
deadline); 2 for a malformed ``--data``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from tarry.cli.events import read_data
from tarry.cli.layout import PlainCommand, PlainGroup
from tarry.cli.options import current_user
from tarry.cli.session import note, open_run_store, print_json, print_listing, resolve_task_id
from tarry.clock import SystemClock
from tarry.config import load_settings
from tarry.engine import taskdesk
from tarry.engine.documents import task_document
from tarry.errors import InvalidTaskCompletion, StoreMissing
from tarry.model import TaskState

__all__ = ["tasks_app", "tasks_table"]

_Document = Mapping[str, Any]

tasks_app = typer.Typer(
    name="tasks", cls=PlainGroup, no_args_is_help=False, add_completion=False,
    pretty_exceptions_enable=False, rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Tasks for people: list the open ones; complete one.")


@tasks_app.callback(invoke_without_command=True)
def list_tasks(
        ctx: typer.Context,
        every: Annotated[bool, typer.Option(
            "--all", help="Every task, completed, timed out and cancelled ones too.")] = False,
        principal: Annotated[str | None, typer.Option(
            "--as", metavar="NAME",
            help="Only the tasks the principal NAME may complete.")] = None,
        limit: Annotated[int, typer.Option(
            "--limit", metavar="N", min=1, help="At most N tasks, newest first.")] = 50,
        as_json: Annotated[bool, typer.Option(
            "--json", help="Print a list of task documents (JSON).")] = False) -> None:
    """List the open tasks, newest first (--all: every task)."""
    if ctx.invoked_subcommand is not None:
        return
    nothing = "no tasks" if every else "no open tasks"
    try:
        with open_run_store() as store:
            records = taskdesk.list_tasks(store, state=None if every else TaskState.OPEN,
                                          principal=principal, limit=limit)
    except StoreMissing as exc:
        records = []
        nothing = f"{nothing}: {exc}"
    print_listing([task_document(record) for record in records], tasks_table,
                  as_json=as_json, nothing=nothing)


@tasks_app.command("complete", cls=PlainCommand)
def complete(
        task_id: Annotated[str, typer.Argument(
            metavar="ID", help="A task id, or a prefix of one that no other task's id has.")],
        outcome: Annotated[str, typer.Option(
            "--outcome", metavar="O", help="The decision: one of the task's outcomes.")],
        data: Annotated[str | None, typer.Option(
            "--data", metavar="JSON|@FILE",
            help="What the task's form asks for: a JSON object, or @path of a file holding "
                 "one (default: none).")] = None,
        principal: Annotated[str | None, typer.Option(
            "--as", metavar="NAME",
            help="Complete it as the principal NAME (default: your user name).")] = None,
        as_json: Annotated[bool, typer.Option(
            "--json", help="Print the task document (JSON).")] = False) -> None:
    """Complete a task with an outcome (and the form's data); its run resumes."""
    settings = load_settings()
    answer = read_data(data, settings.limits.value_bytes, "value_bytes")
    by = principal or current_user()
    with open_run_store(settings) as store:
        task_id = resolve_task_id(store, task_id)
        try:
            record = taskdesk.complete_task(store, SystemClock().now(), task_id,
                                            outcome=outcome, data=answer, by=by,
                                            value_bytes=settings.limits.value_bytes)
        except InvalidTaskCompletion as refused:
            typer.echo(f"error: task {task_id} does not take this answer:", err=True)
            for problem in refused.problems:
                typer.echo(f"  - {problem}", err=True)
            raise typer.Exit(1) from None
    doc = task_document(record)
    if as_json:
        print_json(doc)
    else:
        typer.echo(f"task {doc['id']} ({doc['title']}): completed as {doc['outcome']} by "
                   f"{doc['by']}; run {doc['run']} resumes")
    note("the run resumes when a worker executes it (tarry worker, or tarry serve); this "
         "command runs none")


def tasks_table(docs: Sequence[_Document]) -> Table:
    """One row per task: id, title, state, run, who may complete it, deadline, reminders so
    far, and for a completed one who chose what."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for column in ("id", "title", "state", "run", "assign", "until", "reminders", "answer"):
        table.add_column(column, overflow="fold")
    for doc in docs:
        table.add_row(doc["id"], doc["title"], doc["state"], doc["run"],
                      ", ".join(doc["assign"]) or "anyone", doc["until"],
                      str(doc["reminders"]), _answer(doc))
    return table


def _answer(doc: _Document) -> str:
    if doc["by"] is None:
        return ""
    data = json.dumps(doc["data"], ensure_ascii=False, separators=(",", ":"))
    return f"{doc['outcome']} by {doc['by']} at {doc['completed_at']} {data}"

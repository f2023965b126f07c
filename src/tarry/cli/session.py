"""What every command shares: the project's engine and the ways to write output.

Standard output carries the answer (a table, a line, or exactly one JSON document with
``--json``); everything else, errors included, goes to standard error.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from tarry.config import Settings, load_settings
from tarry.engine.runtime import Engine
from tarry.errors import (
    AmbiguousRunId,
    AmbiguousTaskId,
    FlowNotFound,
    RunNotFound,
    StoreMissing,
    TarryError,
    TaskNotFound,
)
from tarry.store import open_store
from tarry.store.base import Store

__all__ = ["console", "note", "open_engine", "open_run_store", "print_json",
           "resolve_run_id", "resolve_task_id"]

_PIPE_WIDTH = 200


@contextmanager
def open_engine(settings: Settings | None = None, *, flow: str | None = None) -> Iterator[Engine]:
    """The engine of ``settings`` (default: the project around the working directory),
    closed afterwards. ``flow``, the flow a command starts, is found before the store is
    opened: a flow that does not exist creates no store."""
    settings = settings or load_settings()
    with _saying_where_flows_were_looked_for(settings):
        engine = Engine.from_settings(settings, must_find=flow)
        try:
            yield engine
        finally:
            engine.close()


@contextmanager
def _saying_where_flows_were_looked_for(settings: Settings) -> Iterator[None]:
    """A flow not found outside a project says that no ``tarry.toml`` was found, and where."""
    try:
        yield
    except FlowNotFound as exc:
        if settings.config_file is not None:
            raise
        raise FlowNotFound(f"{exc} ({settings.origin})", key=exc.key) from None


@contextmanager
def open_run_store(settings: Settings | None = None) -> Iterator[Store]:
    """Only the project's store, closed afterwards.

    Commands that read or cancel runs use it, so that a broken flow file, action module or
    event manifest never stands between an operator and the runs already in the store. They
    never create a store: when the project's SQLite file does not exist, ``StoreMissing``
    says where it was looked for and which project said so.
    """
    settings = settings or load_settings()
    path = settings.sqlite_path
    if path is not None and not path.exists():
        raise StoreMissing(f"no store at {path} yet ({settings.origin}); a command "
                           "that starts a run or sends an event creates it")
    store = open_store(settings.database)
    try:
        yield store
    finally:
        store.close()


def resolve_run_id(store: Store, given: str) -> str:
    """The id of the one run whose id is or starts with ``given`` (as git takes a short hash).

    Raises ``RunNotFound`` when none does and ``AmbiguousRunId`` when several do.
    """
    found = store.run_ids_starting(given, limit=2) if given else []
    return _the_one(found, lambda: RunNotFound(given), lambda: AmbiguousRunId(given, found))


def resolve_task_id(store: Store, given: str) -> str:
    """The id of the one task whose id is or starts with ``given``, as for runs.

    Raises ``TaskNotFound`` when none does and ``AmbiguousTaskId`` when several do.
    """
    found = store.task_ids_starting(given, limit=2) if given else []
    return _the_one(found, lambda: TaskNotFound(given), lambda: AmbiguousTaskId(given, found))


def _the_one(found: list[str], missing: Callable[[], TarryError],
             ambiguous: Callable[[], TarryError]) -> str:
    """The one id of ``found``; else the error ``missing`` or ``ambiguous`` makes."""
    if not found:
        raise missing()
    if len(found) > 1:
        raise ambiguous()
    return found[0]


def console() -> Console:
    """A console on standard output that prints data as it is (no markup, no emoji).

    Output to a pipe or a file is laid out for a wide page rather than folded at 80 columns,
    unless ``COLUMNS`` says otherwise.
    """
    wide = not sys.stdout.isatty() and "COLUMNS" not in os.environ
    return Console(highlight=False, markup=False, emoji=False, soft_wrap=True,
                   width=_PIPE_WIDTH if wide else None)


def print_json(document: Any) -> None:
    """Print ``document`` as the one JSON document of standard output."""
    typer.echo(json.dumps(document, indent=2, ensure_ascii=False, default=str))


def note(message: str) -> None:
    """A line for the person at the terminal, on standard error."""
    typer.echo(message, err=True)


def print_listing(docs: Sequence[Any], table: Callable[[Sequence[Any]], Table], *,
                  as_json: bool, nothing: str) -> None:
    """Print a list command's ``docs``: as one JSON list (an empty one too) or as ``table``
    lays them out; when there are none, say ``nothing`` on standard error."""
    if as_json:
        print_json(docs)
    elif docs:
        console().print(table(docs))
    if not docs:
        note(nothing)

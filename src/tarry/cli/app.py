"""The ``tarry`` command line: the commands, the global ``--debug`` option, error reporting.

Exit codes: 0 success; 1 the thing asked for failed (a refused flow, a failed run, an unknown
run id, a store error); 2 a usage error (an unknown option, a malformed value). A tarry error
is reported as one ``error: …`` line on standard error (a flow refused at load: one
``file:line:col: message`` line per problem), with the traceback only under ``--debug``.
"""

from __future__ import annotations

import errno
import sys
import traceback
from collections.abc import Callable
from importlib.metadata import version
from typing import Annotated, Any

import typer

from tarry.cli import (
    events,
    graph,
    holds,
    operate,
    project,
    replay,
    retention,
    runs,
    scenarios,
    serve,
    tasks,
    triggers,
    worker,
)
from tarry.cli.layout import PlainCommand, PlainGroup
from tarry.errors import ConfigError, LoadError, TarryError
from tarry.secrets import Redactor

__all__ = ["app", "error_lines", "main"]


def error_lines(exc: BaseException) -> list[str]:
    """How an error is reported: each load problem on its line, else one ``error:`` line;
    database passwords and the environment's tokens masked."""
    redact = Redactor.from_environment()
    if isinstance(exc, LoadError) and exc.problems:
        return [redact(str(problem)) for problem in exc.problems]
    if isinstance(exc, ConfigError):
        return [redact(f"error: {message}") for message in exc.args]
    if isinstance(exc, OSError) and exc.filename is not None:
        return [redact(f"error: {exc.filename}: {exc.strerror}")]
    return [redact(f"error: {exc}")]


def _reportable(exc: BaseException) -> bool:
    """Errors of the user's world (not bugs): tarry's own, and the operating system's."""
    if isinstance(exc, OSError):
        return exc.errno != errno.EPIPE  # a closed pipe is handled by typer itself
    return isinstance(exc, TarryError)


class _TarryGroup(PlainGroup):
    """Runs a command and turns a tarry error into its error lines and exit code 1."""

    def invoke(self, ctx: Any) -> Any:  # ctx: the click Context typer passes
        """Invoke the command line, reporting errors (see the module docstring)."""
        try:
            return super().invoke(ctx)
        except Exception as exc:
            if not _reportable(exc):
                raise
            if ctx.params.get("debug"):
                traceback.print_exception(exc, file=sys.stderr)
            for line in error_lines(exc):
                typer.echo(line, err=True)
            raise typer.Exit(1) from None


app = typer.Typer(
    name="tarry", cls=_TarryGroup, no_args_is_help=True, add_completion=False,
    pretty_exceptions_enable=False, rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="tarry: a durable workflow engine whose core competence is waiting.")


def _print_version(wanted: bool) -> None:
    if wanted:
        typer.echo(f"tarry {version('tarry')}")
        raise typer.Exit()


@app.callback()
def _global_options(
        debug: Annotated[bool, typer.Option(
            "--debug", help="Show the traceback of an error.")] = False,
        _version: Annotated[bool, typer.Option(
            "--version", is_eager=True, expose_value=False, callback=_print_version,
            help="Print tarry's version and exit.")] = False) -> None:
    """Options for every command (read by the error reporting)."""


_COMMANDS: dict[str, Callable[..., None]] = {
    "init": project.init,
    "validate": project.validate,
    "run": runs.run,
    "start": runs.start,
    "worker": worker.worker,
    "serve": serve.serve,
    "show": runs.show,
    "cancel": operate.cancel,
    "retry": operate.retry,
    "rerun": operate.rerun,
    "held": holds.held,
    "doctor": holds.doctor,
    "send": events.send,
    "migrate": project.migrate,
    "test": scenarios.scenario_tests,
    "triggers": triggers.triggers,
    "graph": graph.graph,
    "purge": retention.purge,
    "replay": replay.replay,
}

for _name, _command in _COMMANDS.items():
    app.command(_name, cls=PlainCommand)(_command)
app.add_typer(runs.runs_app)
app.add_typer(events.events_app)
app.add_typer(tasks.tasks_app)


def main() -> None:
    """Run the command line (the ``tarry`` console script)."""
    app(prog_name="tarry")

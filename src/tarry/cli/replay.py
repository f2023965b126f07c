"""``tarry replay``: the check before a deploy that changes Python flows.

It replays the recorded journals of the runs selected against the code the project's app
holds now, with no effects (nothing is called, nothing written), and exits 1 when any run
would fail on its next resume (``nondeterminism``, or another failure), 0 otherwise.
"""

from __future__ import annotations

from typing import Annotated

import typer

from tarry import eventloop
from tarry.cli.options import choice
from tarry.cli.session import open_engine, open_run_store, print_json, resolve_run_id
from tarry.engine.replaying import DEFAULT_STATUSES
from tarry.model import RunStatus

__all__ = ["replay"]


def replay(
        runs: Annotated[list[str] | None, typer.Argument(
            metavar="RUN", show_default=False,
            help="Run ids (or the start of one); none: every run the filters select.")] = None,
        flow: Annotated[str | None, typer.Option(
            "--flow", metavar="F", help="Only runs of this flow.")] = None,
        statuses: Annotated[list[RunStatus] | None, typer.Option(
            "--status", metavar="S", parser=choice(RunStatus, "a status"),
            help="Only runs with this status (repeat for several); default: every run that "
                 "has not ended (" + ", ".join(DEFAULT_STATUSES) + ").")] = None,
        as_json: Annotated[bool, typer.Option(
            "--json", help="Print JSON instead of text.")] = False) -> None:
    """Replay the recorded journals of Python runs against the current code, with no
    effects; list each run that would hit nondeterminism (or fail otherwise) on its next
    resume, and exit 1 if any. Runs of YAML flows are skipped: each resumes on the
    definition it started with."""
    with open_run_store() as store:  # a store that does not exist is an error, not created
        runs = [resolve_run_id(store, run) for run in runs or ()]
    with open_engine() as engine:
        report = eventloop.run(engine.replay(runs or (), flow=flow,
                                             statuses=tuple(statuses) if statuses else None))
    if as_json:
        print_json(report.document())
    else:
        for result in report.results:
            if result.verdict != "ok":
                typer.echo(result.line())
        typer.echo(report.summary())
    raise typer.Exit(1 if report.problems else 0)

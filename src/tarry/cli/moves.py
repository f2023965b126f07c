"""``tarry runs migrate``: move the held and waiting runs of a YAML flow to a new definition.

``--dry-run`` lists each run with ``moves`` or ``cannot move: <reason>`` and changes nothing;
``--yes`` moves those that can, each in a short transaction of its own, and leaves the rest
untouched. Exit 0 when every run moves (moved, or would move in a dry run), 1 when any cannot
move or changed while it was being moved, 2 for a usage error (neither or both of
``--dry-run`` and ``--yes``).
"""

from __future__ import annotations

from typing import Annotated

import typer

from tarry.cli.options import current_user
from tarry.cli.session import console, open_engine, print_json
from tarry.engine.migrating import MoveReport

__all__ = ["migrate_runs"]


def migrate_runs(
        flow: Annotated[str, typer.Option(
            "--flow", metavar="F", help="The YAML flow whose held and waiting runs move.")],
        to: Annotated[str, typer.Option(
            "--to", metavar="latest|PATH",
            help="The definition they move to: latest (the flow's current file in the "
                 "project) or the path of a flow file of the same flow.")] = "latest",
        dry_run: Annotated[bool, typer.Option(
            "--dry-run", help="List each run with whether it moves; change nothing.")] = False,
        yes: Annotated[bool, typer.Option(
            "--yes", help="Move every run that can move.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
        = False) -> None:
    """Move the held and waiting runs of a YAML flow to its new definition (--dry-run lists
    which would move and why others cannot; --yes moves them)."""
    if dry_run == yes:
        raise typer.BadParameter("give --dry-run to see which runs would move, or --yes to "
                                 "move them")
    with open_engine() as engine:
        report = engine.migrate_runs(flow, to=to, by=current_user(), dry_run=dry_run)
    if as_json:
        print_json(report.document())
    else:
        _print(report)
    raise typer.Exit(0 if report.ok else 1)


_SAID = {"moves": "would move", "moved": "moved", "cannot move": "cannot move",
         "skipped": "skipped (changed meanwhile)"}


def _print(report: MoveReport) -> None:
    out = console()
    for run in report.runs:
        said = run.outcome + (f": {'; '.join(run.reasons)}" if run.reasons else "")
        out.print(f"run {run.run_id} ({run.status}) {said}")
    parts = [f"{count} run{'' if count == 1 else 's'} {_SAID[outcome]}"
             for outcome, count in report.counts().items() if count]
    already = (f"; {report.current} already on the new definition" if report.current
               else "")
    tail = " (dry run: nothing changed)" if report.dry_run else ""
    summary = ", ".join(parts) if parts else "no run to move"
    out.print(f"{report.flow}: {summary}{already}{tail}")

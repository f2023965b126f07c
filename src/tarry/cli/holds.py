"""The commands about holds: ``held`` and ``doctor``, and the ``--hold-after`` option.

``tarry held`` shows at most three held runs and a count of the rest (``--all``: every one);
``--json`` lists every held run. ``tarry doctor`` checks the deployment (see
:mod:`tarry.holds.doctor`) and exits 1 when it found an error, 0 with warnings only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from tarry.cli.session import note, open_run_store, print_json, print_listing
from tarry.clock import SystemClock, from_iso, iso
from tarry.errors import StoreMissing
from tarry.holds.doctor import Level, diagnose
from tarry.language.durations import format_duration, parse_instant
from tarry.model import RunRecord, RunStatus

__all__ = ["HoldAfterOption", "doctor", "held", "held_row", "held_table", "hold_after",
           "shown_rows"]

HoldAfterOption = Annotated[str | None, typer.Option(
    "--hold-after", metavar="INSTANT",
    help="Hold the run until this instant, with its zone (2026-09-01T09:00:00Z), besides "
         "any hold its flow declares.")]

SHOWN = 3
"""How many held runs ``tarry held`` shows without ``--all``."""


def hold_after(text: str | None) -> datetime | None:
    """The ``--hold-after`` instant; a malformed or zone-less one is a usage error."""
    if text is None:
        return None
    try:
        return parse_instant(text)
    except ValueError as exc:  # a flow's timezone does not apply to the command line
        message = str(exc).removesuffix(", or declare the flow's 'timezone'")
        raise typer.BadParameter(message, param_hint="'--hold-after'") from None


def held(all_rows: Annotated[bool, typer.Option(
             "--all", help="Every held run, not only the first three.")] = False,
         as_json: Annotated[bool, typer.Option(
             "--json", help="Print every held run as JSON.")] = False) -> None:
    """Held runs: target, conditions, how long held, next check (three, and how many more)."""
    nothing = "no held runs"
    try:
        total, records = _held_runs(all_rows or as_json)
    except StoreMissing as exc:
        total, records, nothing = 0, [], f"no held runs: {exc}"
    rows = [held_row(record, SystemClock().now()) for record in records]
    print_listing(rows, held_table, as_json=as_json, nothing=nothing)
    if not as_json and total > len(rows):
        typer.echo(f"and {total - len(rows)} more (tarry held --all)")


def _held_runs(every: bool) -> tuple[int, list[RunRecord]]:
    """How many runs are held, and the first three of them (``every``: all of them)."""
    with open_run_store() as store:
        total = store.count_runs(status=RunStatus.HELD)
        limit = total if every else SHOWN
        return total, store.list_runs(status=RunStatus.HELD, limit=max(limit, 1))


def held_row(record: RunRecord, now: datetime) -> dict[str, Any]:
    """One held run as ``tarry held`` shows it."""
    waiting = record.waiting_for or {}
    since = from_iso(waiting["since"]) if waiting.get("since") else record.updated_at
    return {"id": record.id, "flow": record.flow, "target": record.target,
            "conditions": _conditions(waiting.get("conditions") or [], now),
            "held_since": iso(since),
            "held_for": _rounded(now - since),
            "next_check": waiting.get("until")}


def shown_rows(rows: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """The cells of the held table: target (else the run id), flow, conditions, held for,
    next check."""
    return [[row["target"] or row["id"], row["flow"], row["conditions"],
             row["held_for"], row["next_check"] or ""] for row in rows]


def held_table(rows: Sequence[Mapping[str, Any]]) -> Table:
    """The table ``tarry held`` prints of :func:`held_row` rows."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for column in ("target", "flow", "conditions", "held for", "next check"):
        table.add_column(column, no_wrap=column != "conditions")
    for cells in shown_rows(rows):
        table.add_row(*cells)
    return table


def _conditions(conditions: Sequence[Mapping[str, Any]], now: datetime) -> str:
    """``after 2026-09-01T09:00:00.000Z + jira (go) + ci``; an ``after`` that has passed is
    no longer a condition."""
    return " + ".join(f"after {c['after']}" if "after" in c
                      else f"{c['check']} (go)" if c.get("clear") else str(c["check"])
                      for c in conditions
                      if "after" not in c or from_iso(c["after"]) > now)


def _rounded(delta: timedelta) -> str:
    """A duration to the second, or to the minute from an hour on: ``2h14m``, ``41s``."""
    unit = timedelta(minutes=1) if delta >= timedelta(hours=1) else timedelta(seconds=1)
    return format_duration(max(delta, timedelta(0)) // unit * unit)


def doctor(as_json: Annotated[bool, typer.Option(
        "--json", help="Print the findings as JSON.")] = False) -> None:
    """Check the deployment: config, check scripts, flows, manifests, the store."""
    findings = diagnose(SystemClock().now())
    errors, warnings = (sum(f.level is level for f in findings)
                        for level in (Level.ERROR, Level.WARNING))
    if as_json:
        print_json({"ok": errors == 0, "errors": errors, "warnings": warnings,
                    "findings": [finding.document() for finding in findings]})
    else:
        for finding in findings:
            typer.echo(str(finding))
        note(f"{errors} error(s), {warnings} warning(s)")
    if errors:
        raise typer.Exit(1)

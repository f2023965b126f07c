"""``tarry purge``: delete the ended runs and settled events past retention, on demand.

The workers do the same in the background when ``[retention]`` is set; this command does it
now, or with ``--older-than`` whatever ended (or arrived) longer ago than that, or with
``--dry-run`` only counts. It works a short batch per transaction, so it can be stopped at
any moment and run again.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

import typer

from tarry.cli.session import open_run_store, print_json
from tarry.clock import SystemClock
from tarry.config import load_settings, retention_duration
from tarry.engine import retention
from tarry.errors import ConfigError

__all__ = ["purge"]


def _duration(text: str) -> timedelta:
    try:
        return retention_duration(text, "--older-than")
    except ConfigError as exc:
        message = str(exc).removeprefix("--older-than: ")
        raise typer.BadParameter(message, param_hint="'--older-than'") from None


def purge(
        older_than: Annotated[str | None, typer.Option(
            "--older-than", metavar="D",
            help="Delete the runs that ended, and the events that arrived, longer ago than "
                 "D (such as 30d) instead of what [retention] says.")] = None,
        dry_run: Annotated[bool, typer.Option(
            "--dry-run", help="Only count what would be deleted.")] = False,
        as_json: Annotated[bool, typer.Option(
            "--json", help="Print {runs, events, dry_run} as JSON.")] = False) -> None:
    """Delete ended runs and settled events past retention (never a run that has not
    ended, nor an event a waiting run may still take)."""
    settings = load_settings()
    given = _duration(older_than) if older_than is not None else None
    now = SystemClock().now()
    expired = retention.cutoffs(settings.retention, now, given)
    with open_run_store(settings) as store:
        done = (retention.count(store, expired, now) if dry_run
                else retention.purge(store, expired, now))
    if as_json:
        print_json({"runs": done.runs, "events": done.events, "dry_run": dry_run})
    else:
        verb = "would delete" if dry_run else "deleted"
        typer.echo(f"{verb} {done.runs} ended runs and {done.events} settled events")

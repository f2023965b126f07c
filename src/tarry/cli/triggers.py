"""``tarry triggers``: every trigger of the project's flows, with its next fire time."""

from __future__ import annotations

from typing import Annotated

import typer
from rich import box
from rich.table import Table

from tarry.cli.session import console, note, open_engine, print_json
from tarry.clock import SystemClock
from tarry.language.model import EventTrigger
from tarry.triggers.describe import PENDING_SHOWN, trigger_document, trigger_summary

__all__ = ["triggers"]

def triggers(as_json: Annotated[bool, typer.Option(
        "--json", help="Print every trigger as JSON.")] = False) -> None:
    """Triggers of the project's flows: what starts each, and when next (a debounced
    trigger: the bursts of events still to start their run)."""
    now = SystemClock().now()
    with open_engine() as engine:
        flows = engine.catalog.available()[0]
        pending = (engine.store.pending_debounces(now, PENDING_SHOWN)
                   if any(isinstance(trigger, EventTrigger) and trigger.debounce
                          for flow in flows for trigger in flow.triggers)
                   else [])
        documents = [trigger_document(flow, trigger, now, pending)
                     for flow in flows for trigger in flow.triggers]
    if as_json:
        print_json(documents)
        return
    if not documents:
        note("no triggers (a flow declares them under 'on:')")
        return
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for column in ("flow", "trigger", "target"):
        table.add_column(column, no_wrap=column == "flow")
    for document in documents:
        table.add_row(document["flow"], trigger_summary(document), document["target"] or "")
    console().print(table)

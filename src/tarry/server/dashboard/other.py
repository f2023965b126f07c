"""The flows: each flow the server can start, with its inputs, its hold and its triggers,
and the event types runs wait for."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from tarry.clock import iso
from tarry.engine.catalog import PROGRAM_PREFIX
from tarry.engine.runtime import Engine
from tarry.language.durations import format_duration
from tarry.language.model import Flow, Trigger
from tarry.model import RunRecord
from tarry.server.calls import off_loop
from tarry.server.dashboard.web import DashboardRoute, Viewer, engine_of, page, viewer
from tarry.triggers.describe import trigger_document, trigger_summary

__all__ = ["flow_row", "router", "trigger_text"]

router = APIRouter(route_class=DashboardRoute)

Who = Annotated[Viewer, Depends(viewer)]


def trigger_text(flow: Flow, trigger: Trigger, now: datetime) -> str:
    """What starts the flow, as ``tarry triggers`` says it: ``on each forge.label event if
    …``, or ``0 9 * * mon-fri in Europe/Berlin (catch up: latest), next …``."""
    return trigger_summary(trigger_document(flow, trigger, now))


def flow_row(flow: Flow, now: datetime,
             recent: Sequence[RunRecord] = ()) -> dict[str, Any]:
    """What the flows page shows of one flow; ``recent`` are its latest runs (shown for a
    flow with triggers: what they started)."""
    return {"name": flow.name, "description": flow.description,
            "kind": "python" if flow.source.startswith(PROGRAM_PREFIX) else "yaml",
            "inputs": sorted(flow.inputs), "held": bool(flow.hold),
            "triggers": [trigger_text(flow, trigger, now) for trigger in flow.triggers],
            "recent": [{"id": run.id, "status": run.status.value, "target": run.target,
                        "created_at": iso(run.created_at)} for run in recent]}


_RECENT = 5
"""How many of its latest runs the flows page shows under a flow with triggers."""


def _flows_with_recent(engine: Engine) -> tuple[list[dict[str, Any]], list[str]]:
    """Every flow's row (its latest runs for those with triggers) and the load problems."""
    flows, refused = engine.catalog.available()
    now = engine.clock.now()
    rows = [flow_row(flow, now, engine.store.list_runs(flow=flow.name, limit=_RECENT)
                     if flow.triggers else ())
            for flow in sorted(flows, key=lambda f: f.name)]
    return rows, [str(problem) for error in refused for problem in error.problems]


@router.get("/flows", response_class=HTMLResponse)
async def flows_page(request: Request, who: Who) -> HTMLResponse:
    """The flows this server can start (and the files that do not load), and the event
    types this project declares."""
    engine = engine_of(request)
    flows, problems = await off_loop(engine, lambda: _flows_with_recent(engine))
    event_types = [{"type": name, "correlate_on": [
                        key if path == key else f"{key}: {path}"
                        for key, path in manifest.path_texts().items()],
                    "buffer": format_duration(manifest.buffer),
                    "schema": manifest.schema is not None,
                    "signed": manifest.secret_env is not None}
                   for name, manifest in sorted(engine.manifests.items())]
    return page(request, who, "flows.html", event_types=event_types, flows=flows,
                problems=problems)

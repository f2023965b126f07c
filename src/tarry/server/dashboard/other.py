"""The tasks inbox (tasks for people, SPEC 3.7) and the flows: each flow the server can start,
with its inputs, its hold and its triggers (SPEC 3.8), and the event types runs wait for."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from tarry.engine.catalog import PROGRAM_PREFIX
from tarry.language.durations import format_duration
from tarry.language.model import EventTrigger, Flow, Trigger
from tarry.server.calls import off_loop
from tarry.server.dashboard.web import DashboardRoute, Viewer, engine_of, page, viewer

__all__ = ["flow_row", "router", "trigger_text"]

router = APIRouter(route_class=DashboardRoute)

Who = Annotated[Viewer, Depends(viewer)]


@router.get("/tasks", response_class=HTMLResponse)
async def tasks_page(request: Request, who: Who) -> HTMLResponse:
    """Tasks for people: the open ones with their forms, and the completed ones."""
    return page(request, who, "tasks.html")


def trigger_text(trigger: Trigger) -> str:
    """``on event forge.label``, or ``schedule 0 9 * * mon-fri (Europe/Berlin)``."""
    if isinstance(trigger, EventTrigger):
        return f"on event {trigger.event}"
    return f"schedule {trigger.cron} ({trigger.timezone})"


def flow_row(flow: Flow) -> dict[str, Any]:
    """What the flows page shows of one flow."""
    return {"name": flow.name, "description": flow.description,
            "kind": "python" if flow.source.startswith(PROGRAM_PREFIX) else "yaml",
            "inputs": sorted(flow.inputs), "held": bool(flow.hold),
            "triggers": [trigger_text(trigger) for trigger in flow.triggers]}


@router.get("/flows", response_class=HTMLResponse)
async def flows_page(request: Request, who: Who) -> HTMLResponse:
    """The flows this server can start (and the files that do not load), and the event
    types this project declares."""
    engine = engine_of(request)
    flows, refused = await off_loop(engine, engine.catalog.available)
    event_types = [{"type": name, "correlate_on": list(manifest.correlate_on),
                    "buffer": format_duration(manifest.buffer),
                    "schema": manifest.schema is not None,
                    "signed": manifest.secret_env is not None}
                   for name, manifest in sorted(engine.manifests.items())]
    return page(request, who, "flows.html", event_types=event_types,
                flows=[flow_row(flow) for flow in sorted(flows, key=lambda f: f.name)],
                problems=[str(problem) for error in refused for problem in error.problems])

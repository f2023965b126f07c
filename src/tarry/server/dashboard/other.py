"""The pages that other parts of tarry fill in: the tasks inbox (tasks for people, SPEC 3.7)
and the flows with their event types (triggers, SPEC 3.8, list here too)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from tarry.language.durations import format_duration
from tarry.server.dashboard.web import DashboardRoute, Viewer, engine_of, page, viewer

__all__ = ["router"]

router = APIRouter(route_class=DashboardRoute)

Who = Annotated[Viewer, Depends(viewer)]


@router.get("/tasks", response_class=HTMLResponse)
async def tasks_page(request: Request, who: Who) -> HTMLResponse:
    """Tasks for people: the open ones with their forms, and the completed ones."""
    return page(request, who, "tasks.html")


@router.get("/flows", response_class=HTMLResponse)
async def flows_page(request: Request, who: Who) -> HTMLResponse:
    """The event types this project declares (what runs can wait for)."""
    manifests = engine_of(request).manifests
    event_types = [{"type": name, "correlate_on": list(manifest.correlate_on),
                    "buffer": format_duration(manifest.buffer),
                    "schema": manifest.schema is not None,
                    "signed": manifest.secret_env is not None}
                   for name, manifest in sorted(manifests.items())]
    return page(request, who, "flows.html", event_types=event_types)

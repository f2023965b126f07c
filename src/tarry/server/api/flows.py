"""``/v1/flows``: the loaded flows with their triggers, and the declared event types."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path

from tarry.engine.catalog import PROGRAM_PREFIX
from tarry.graph import diagram_document, render_svg
from tarry.language.manifests import Manifest
from tarry.language.model import EventTrigger, Flow
from tarry.model import DebounceRecord
from tarry.server.api.context import EngineDep, error_responses
from tarry.server.api.models import FlowGraph, FlowList
from tarry.server.auth import principal_of_request
from tarry.server.calls import off_loop
from tarry.server.drawings import flow_counts, flow_named, runs_link
from tarry.triggers.describe import PENDING_SHOWN, trigger_document

__all__ = ["router"]
router = APIRouter(prefix="/v1/flows", tags=["flows"],
                   dependencies=[Depends(principal_of_request)],
                   responses=error_responses(401, 503))


@router.get("", response_model=FlowList)
async def list_flows(engine: EngineDep) -> dict[str, Any]:
    """Every flow the server can start (flow files that do not load are listed under
    ``problems``), and every event type its manifests declare."""
    flows, refused = await off_loop(engine, engine.catalog.available)
    now = engine.clock.now()
    pending = (await engine.async_store.pending_debounces(now, PENDING_SHOWN)
               if any(isinstance(trigger, EventTrigger) and trigger.debounce
                      for flow in flows for trigger in flow.triggers) else [])
    return {"flows": [_flow(flow, now, pending) for flow in sorted(flows, key=lambda f: f.name)],
            "events": [_manifest(m) for _, m in sorted(engine.manifests.items())],
            "problems": [str(problem) for error in refused for problem in error.problems]}


@router.get("/{name}/graph", response_model=FlowGraph, responses=error_responses(404, 422))
async def flow_graph(name: Annotated[str, Path(description="The flow's name.", max_length=200)],
                     engine: EngineDep) -> dict[str, Any]:
    """A flow's drawing: its steps nested as drawn (a Python flow's: the operations its
    latest runs recorded), each with the count of runs at it now by status, and the same as
    SVG (each count links to the dashboard's run list)."""
    flow, diagram = await flow_named(engine, name)
    counts = await flow_counts(engine, flow.name)
    svg = render_svg(diagram, counts=counts,
                     link=lambda node, status: runs_link(flow.name, node, status))
    return {**diagram_document(diagram, counts), "svg": svg}


def _flow(flow: Flow, now: datetime, pending: list[DebounceRecord]) -> dict[str, Any]:
    python = flow.source.startswith(PROGRAM_PREFIX)
    return {"name": flow.name, "description": flow.description,
            "kind": "python" if python else "yaml", "path": "" if python else flow.path,
            "inputs": sorted(flow.inputs), "hold": bool(flow.hold),
            "triggers": [trigger_document(flow, trigger, now, pending)
                         for trigger in flow.triggers]}


def _manifest(manifest: Manifest) -> dict[str, Any]:
    return {"type": manifest.type, "correlate_on": list(manifest.correlate_on),
            "correlate_paths": manifest.path_texts(),
            "schema": dict(manifest.schema) if manifest.schema is not None else None,
            "buffer_seconds": manifest.buffer.total_seconds(),
            "signature": manifest.signature}

"""A flow's page: its drawing, with how many runs are at each step now, each count a link to
those runs; and a run's path drawn on the definition it started with."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from tarry.engine.catalog import PROGRAM_PREFIX
from tarry.engine.runtime import Engine
from tarry.graph import Diagram, diagram_of, diagram_of_operations, path_marks, render_svg
from tarry.server.calls import off_loop
from tarry.server.dashboard.web import (
    DashboardRoute,
    Viewer,
    engine_of,
    page,
    query_text,
    viewer,
)
from tarry.server.drawings import flow_counts, flow_named, runs_link

__all__ = ["FOLD_ABOVE", "router", "run_path_svg"]

router = APIRouter(route_class=DashboardRoute)

Who = Annotated[Viewer, Depends(viewer)]
FlowName = Annotated[str, Path(max_length=200)]


FOLD_ABOVE = 60
"""A flow of more steps than this is drawn with its groups, loops and reminders folded (each
one line, with the runs inside it counted on it) until the reader opens them."""


def _folded(diagram: Diagram, fold: str | None) -> frozenset[str]:
    """The nodes to draw folded: ``fold`` is ``all`` or ``none``, else the flow's size
    decides."""
    holders = [node for node in diagram.nodes() if node.regions]
    if fold is None:
        fold = "all" if len(list(diagram.nodes())) > FOLD_ABOVE else "none"
    return frozenset(node.id for node in holders) if fold == "all" else frozenset()


@router.get("/flows/{name}", response_class=HTMLResponse)
async def flow_page(request: Request, name: FlowName, who: Who) -> HTMLResponse:
    """A flow drawn, with its runs counted at each step (a long flow folded)."""
    engine = engine_of(request)
    flow, diagram = await flow_named(engine, name)
    counts = await flow_counts(engine, flow.name)
    folded = _folded(diagram, query_text(request.query_params, "fold"))
    # render_svg escapes every text it draws: its SVG goes into the page as it is, styled by
    # /assets/graph.css (the page's content security policy refuses an inline style)
    svg = Markup(render_svg(
        diagram, counts=counts, link=lambda node, status: runs_link(flow.name, node, status),
        folded=folded, styled=False))
    total = {status: sum(by.get(status, 0) for by in counts.values())
             for status in ("waiting", "held", "running", "failed")}
    return page(request, who, "flow.html", live="flow_live.html", flow=flow, svg=svg,
                total=total, folded=bool(folded),
                foldable=any(node.regions for node in diagram.nodes()))


async def run_path_svg(engine: Engine, doc: dict[str, Any], digest: str,
                       now: datetime) -> Markup | None:
    """The drawing of the definition a run started with (a Python run: the operations it
    recorded), marked with its path."""
    flow = await off_loop(engine, engine.catalog.by_digest, digest)
    if flow.source.startswith(PROGRAM_PREFIX):
        journal = await engine.async_store.journals([doc["id"]])
        diagram = diagram_of_operations(flow.name, flow.description,
                                        [(journal.get(doc["id"], []), doc.get("waiting_for"))])
    else:
        diagram = diagram_of(flow)
    marks = path_marks(doc.get("history") or [], now)
    return Markup(render_svg(diagram, path=marks, styled=False))  # escaped within

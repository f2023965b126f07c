"""The held runs: each with its target, its conditions, how long it has been held,
its next check, its faults, and a cancel button."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from tarry.clock import iso
from tarry.holds.state import HoldState
from tarry.model import RunRecord, RunStatus
from tarry.server.dashboard import present
from tarry.server.dashboard.runs import PAGE_SIZE, decode_cursor, encode_cursor
from tarry.server.dashboard.web import (
    DashboardRoute,
    PageError,
    Viewer,
    engine_of,
    page,
    query_text,
    viewer,
)

__all__ = ["held_row", "router"]

router = APIRouter(route_class=DashboardRoute)

Who = Annotated[Viewer, Depends(viewer)]


def held_row(record: RunRecord, now: datetime) -> dict[str, Any]:
    """What the held page shows of one held run."""
    waiting = record.waiting_for or {}
    gate = record.state.get("hold")
    hold = HoldState.from_json(gate) if isinstance(gate, dict) else None
    faults = {name: count for name, count in (hold.faults if hold else {}).items() if count}
    return {"id": record.id, "flow": record.flow, "target": record.target,
            "conditions": waiting.get("conditions") or [],
            "held_for": present.short_span(now - record.created_at),
            "created_at": iso(record.created_at),
            "clock_since": waiting.get("since"), "rounds": waiting.get("rounds") or 0,
            "next_check": waiting.get("until"),
            "next_check_in": present.ago_or_ahead(waiting.get("until"), now),
            "expires": waiting.get("expires"),
            "expires_in": present.ago_or_ahead(waiting.get("expires"), now),
            "faults": faults}


@router.get("/held", response_class=HTMLResponse)
async def held_page(request: Request, who: Who) -> HTMLResponse:
    """Every held run, newest first, a page at a time."""
    store = engine_of(request).async_store
    cursor = query_text(request.query_params, "cursor")
    try:
        after = decode_cursor(cursor) if cursor else None
    except ValueError:
        raise PageError(400, "This page link is damaged",
                        "Start again from the first page of held runs.") from None
    records = await store.list_runs(status=RunStatus.HELD, after=after, limit=PAGE_SIZE + 1)
    total = await store.count_runs(status=RunStatus.HELD)
    now = engine_of(request).clock.now()
    shown = records[:PAGE_SIZE]
    return page(request, who, "held.html", live="held_live.html",
                rows=[held_row(record, now) for record in shown], total=total,
                next_cursor=encode_cursor(shown[-1]) if len(records) > PAGE_SIZE else None,
                paged=after is not None)

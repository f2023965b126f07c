"""The event inbox (SPEC 3.5): quarantined, buffered and unmatched events with their
validation errors; one event's page, where its payload is edited and redelivered, or the
event discarded."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import HTMLResponse

from tarry.engine.documents import event_document
from tarry.model import EventState
from tarry.server.api.context import wake_worker
from tarry.server.dashboard.web import (
    DashboardRoute,
    PageError,
    Redirect,
    Viewer,
    engine_of,
    form_of,
    page,
    query_text,
    viewer,
)

__all__ = ["INBOX_TABS", "parse_payload", "router"]

router = APIRouter(route_class=DashboardRoute)

EventId = Annotated[str, Path(max_length=600)]
Who = Annotated[Viewer, Depends(viewer)]

INBOX_TABS: tuple[tuple[str, str], ...] = (
    ("invalid", "Quarantined"), ("buffered", "Buffered"), ("unmatched", "Unmatched"),
    ("delivered", "Delivered"), ("discarded", "Discarded"), ("all", "All"))
"""The inbox's tabs: the event state each shows, and its title."""

ACTIONABLE = frozenset({EventState.INVALID, EventState.BUFFERED, EventState.UNMATCHED})
"""The states an operator can redeliver or discard an event from."""

_SHOWN = 100


def parse_payload(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """An edited payload: the JSON object, or None and why it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"The payload is not valid JSON: {exc.msg} (line {exc.lineno}, " \
                     f"column {exc.colno})."
    if not isinstance(data, dict):
        return None, f"The payload must be a JSON object ({{…}}), not {type(data).__name__}."
    return data, None


@router.get("/events", response_class=HTMLResponse)
async def inbox_page(request: Request, who: Who) -> HTMLResponse:
    """The inbox, one tab per state (quarantined first), newest first."""
    tab = query_text(request.query_params, "state") or "invalid"
    titles = dict(INBOX_TABS)
    if tab not in titles:
        raise PageError(400, "Unknown event state",
                        f"There is no event state '{tab}'; choose one of: "
                        f"{', '.join(titles)}.")
    state = None if tab == "all" else EventState(tab)
    records = await engine_of(request).aio.events(state=state, limit=_SHOWN)
    return page(request, who, "events.html", live="events_live.html", tab=tab,
                tabs=INBOX_TABS, title=titles[tab],
                events=[event_document(record) for record in records], shown=_SHOWN)


@router.get("/events/{event_id}", response_class=HTMLResponse)
async def event_page(request: Request, event_id: EventId, who: Who) -> HTMLResponse:
    """One event: where it went, why it is invalid, and its payload to correct."""
    return await _event_page(request, who, event_id)


async def _event_page(request: Request, who: Who, event_id: str, *, edited: str | None = None,
                      problem: str | None = None, status: int = 200) -> HTMLResponse:
    record = await engine_of(request).async_store.get_event(event_id)
    doc = event_document(record)
    return page(request, who, "event.html", live="event_live.html", status=status, doc=doc,
                actionable=record.state in ACTIONABLE, problem=problem,
                payload=edited if edited is not None else json.dumps(
                    doc["data"], indent=2, ensure_ascii=False))


@router.post("/events/{event_id}/redeliver")
async def redeliver(request: Request, event_id: EventId, who: Who) -> HTMLResponse:
    """Deliver the event again with the payload as edited; a payload that is not a JSON
    object is shown back, as typed, with the reason."""
    form = await form_of(request, who)
    text = form.get("data")
    data, problem = parse_payload(text if isinstance(text, str) else "")
    if data is None:
        return await _event_page(request, who, event_id, edited=str(text or ""),
                                 problem=problem, status=422)
    await engine_of(request).aio.redeliver(event_id, data)
    wake_worker(request)
    raise Redirect(f"/events/{event_id}")


@router.post("/events/{event_id}/discard")
async def discard(request: Request, event_id: EventId, who: Who) -> HTMLResponse:
    """Discard the event (it stays listed as discarded)."""
    await form_of(request, who)
    await engine_of(request).aio.discard(event_id)
    raise Redirect(f"/events/{event_id}")

"""The event inbox: quarantined, buffered and unmatched events with their
validation errors; one event's page, where its payload is edited and redelivered, or the
event discarded."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import HTMLResponse

from tarry.clock import from_millis, to_millis
from tarry.engine.documents import event_document
from tarry.language.jsontext import json_reason, parse_json
from tarry.model import EventRecord, EventState
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

__all__ = ["INBOX_TABS", "PAGE_SIZE", "decode_event_cursor", "encode_event_cursor",
           "parse_payload", "router"]

router = APIRouter(route_class=DashboardRoute)

EventId = Annotated[str, Path(max_length=600)]
Who = Annotated[Viewer, Depends(viewer)]

INBOX_TABS: tuple[tuple[str, str], ...] = (
    ("invalid", "Quarantined"), ("buffered", "Buffered"), ("unmatched", "Unmatched"),
    ("delivered", "Delivered"), ("discarded", "Discarded"), ("all", "All"))
"""The inbox's tabs: the event state each shows, and its title."""

ACTIONABLE = frozenset({EventState.INVALID, EventState.BUFFERED, EventState.UNMATCHED})
"""The states an operator can redeliver or discard an event from."""

_COUNTED = frozenset(state.value for state in ACTIONABLE)
"""The tabs that say how many events they hold."""

PAGE_SIZE = 50
"""Events per page."""


def parse_payload(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """An edited payload: the JSON object, or None and why it is not one."""
    try:
        data = parse_json(text)
    except ValueError as exc:  # not JSON, nested too deep, NaN, a number too long
        return None, f"The payload is not valid JSON: {json_reason(exc)}."
    if not isinstance(data, dict):
        return None, f"The payload must be a JSON object ({{…}}), not {type(data).__name__}."
    return data, None


def encode_event_cursor(record: EventRecord) -> str:
    """The position after ``record`` in the inbox: ``<received_at ms>.<type>.<id>``
    (a type has no dot-free guarantee, so the id is what follows the last dot)."""
    return f"{to_millis(record.received_at)}.{record.type}.{record.id}"


def decode_event_cursor(text: str) -> tuple[datetime, str, str]:
    """The position an inbox cursor names; raises ``ValueError`` when it is not one."""
    millis, _, rest = text.partition(".")
    event_type, dot, event_id = rest.rpartition(".")
    if not (dot and millis.isascii() and millis.isdigit() and event_type and event_id):
        raise ValueError(text)
    try:
        return from_millis(int(millis)), event_type, event_id
    except OverflowError:
        raise ValueError(text) from None


def _after(params: Mapping[str, str]) -> tuple[datetime, str, str] | None:
    text = query_text(params, "cursor")
    try:
        return decode_event_cursor(text) if text else None
    except ValueError:
        raise PageError(400, "This page link is damaged",
                        "Its position in the inbox cannot be read; start again from the "
                        "first page.") from None


@router.get("/events", response_class=HTMLResponse)
async def inbox_page(request: Request, who: Who) -> HTMLResponse:
    """The inbox, one tab per state (quarantined first), newest first, a page at a time,
    optionally of one event type."""
    params = request.query_params
    tab = query_text(params, "state") or "invalid"
    titles = dict(INBOX_TABS)
    if tab not in titles:
        raise PageError(400, "Unknown event state",
                        f"There is no event state '{tab}'; choose one of: "
                        f"{', '.join(titles)}.")
    event_type, after = query_text(params, "type"), _after(params)
    engine = engine_of(request)
    records = await engine.async_store.list_events(
        state=None if tab == "all" else EventState(tab), type=event_type, after=after,
        now=engine.clock.now(), limit=PAGE_SIZE + 1)
    counts = await engine.async_store.count_inbox_events()
    shown = records[:PAGE_SIZE]
    more = urlencode({key: value for key, value in (
        ("state", tab), ("type", event_type),
        ("cursor", encode_event_cursor(shown[-1]) if len(records) > PAGE_SIZE else None))
        if value})
    return page(request, who, "events.html", live="events_live.html", tab=tab,
                tabs=[(state, title, counts.get(EventState(state), 0) if state in _COUNTED
                       else None) for state, title in INBOX_TABS],
                title=titles[tab], event_type=event_type, event_types=sorted(engine.manifests),
                events=[event_document(record) for record in shown],
                next_query=more if len(records) > PAGE_SIZE else None, paged=after is not None)


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

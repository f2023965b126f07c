"""The runs pages: the list with its filters, counts and pages; one run with its explanation,
timeline, bindings and history; and cancelling a run through a confirmation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import HTMLResponse

from tarry.clock import from_millis, to_millis
from tarry.engine.documents import run_document
from tarry.errors import InvalidRequest
from tarry.model import RunRecord, RunStatus
from tarry.server.dashboard import present
from tarry.server.dashboard.explain import explanation
from tarry.server.dashboard.flowpage import run_path_svg
from tarry.server.dashboard.timeline import layout, timeline
from tarry.server.dashboard.web import (
    DashboardRoute,
    PageError,
    Redirect,
    Viewer,
    engine_of,
    form_of,
    form_text,
    local_path,
    page,
    query_text,
    viewer,
)

__all__ = ["PAGE_SIZE", "WAIT_CHOICES", "decode_cursor", "encode_cursor", "router"]

router = APIRouter(route_class=DashboardRoute)

PAGE_SIZE = 50
"""Runs per page."""

RunId = Annotated[str, Path(max_length=200)]
Who = Annotated[Viewer, Depends(viewer)]

WAIT_CHOICES = ("timer", "event", "hold", "poll", "retry", "task", "child", "slot", "throttle",
                "window")
"""The wait kinds the filter offers, in this order (the event types follow); every one of
:data:`tarry.model.WAIT_KINDS`."""


def encode_cursor(record: RunRecord) -> str:
    """The position after ``record`` in the listing: ``<created_at ms>.<id>``."""
    return f"{to_millis(record.created_at)}.{record.id}"


def decode_cursor(text: str) -> tuple[datetime, str]:
    """The position a cursor names; raises ``ValueError`` when it is not one."""
    millis, dot, run_id = text.partition(".")
    if not (dot and millis.isascii() and millis.isdigit() and run_id):
        raise ValueError(text)
    try:
        return from_millis(int(millis)), run_id
    except OverflowError:
        raise ValueError(text) from None


@dataclass(frozen=True)
class RunFilters:
    """The filters of the runs page, as the query string gives them."""

    status: RunStatus | None
    flow: str | None
    target: str | None
    waiting_for: str | None
    at_step: str | None = None

    @classmethod
    def of(cls, params: Mapping[str, str]) -> RunFilters:
        """The filters in ``params``; an unknown status is refused with the valid ones."""
        status = query_text(params, "status")
        if status is not None and status not in RunStatus.__members__.values():
            raise PageError(400, "Unknown status",
                            f"There is no status '{status}'; choose one of: "
                            f"{', '.join(present.STATUS_ORDER)}.")
        return cls(RunStatus(status) if status else None, query_text(params, "flow"),
                   query_text(params, "target"), query_text(params, "waiting_for"),
                   query_text(params, "at_step"))

    def query(self, **changes: str | None) -> str:
        """This filter's query string, with ``changes`` (None drops a parameter)."""
        values = {"status": self.status.value if self.status else None, "flow": self.flow,
                  "target": self.target, "waiting_for": self.waiting_for,
                  "at_step": self.at_step, **changes}
        return urlencode({key: value for key, value in values.items() if value})

    def store_filters(self) -> dict[str, str | None]:
        """The filters but status, as the store's listing takes them."""
        return {"flow": self.flow, "target": self.target, "waiting_for": self.waiting_for,
                "at_step": self.at_step}


def _cursor(params: Mapping[str, str]) -> tuple[datetime, str] | None:
    text = query_text(params, "cursor")
    if text is None:
        return None
    try:
        return decode_cursor(text)
    except ValueError:
        raise PageError(400, "This page link is damaged",
                        "Its position in the list cannot be read; start again from the "
                        "first page.") from None


@router.get("/", include_in_schema=False)
async def home() -> HTMLResponse:
    """The dashboard opens on the runs."""
    raise Redirect("/runs")


@router.get("/runs", response_class=HTMLResponse)
async def runs_page(request: Request, who: Who) -> HTMLResponse:
    """Runs, newest first: filtered, counted per status, a page at a time."""
    params = request.query_params
    filters = RunFilters.of(params)
    try:
        engine_of(request).check_wait_filter(filters.waiting_for)
    except InvalidRequest as exc:
        raise PageError(400, "Unknown wait", f"The filter {exc}.") from None
    after = _cursor(params)
    store = engine_of(request).async_store
    records = await store.list_runs(status=filters.status, after=after, limit=PAGE_SIZE + 1,
                                    **filters.store_filters())
    counts = await store.count_runs_per_status(**filters.store_filters())
    shown = records[:PAGE_SIZE]
    now = engine_of(request).clock.now()
    rows = [_row(run_document(record), now) for record in shown]
    next_query = (filters.query(cursor=encode_cursor(shown[-1]))
                  if len(records) > PAGE_SIZE else None)
    return page(request, who, "runs.html", live="runs_live.html", filters=filters, rows=rows,
                counts=_counts(counts, filters), total=sum(counts.values()),
                wait_choices=WAIT_CHOICES, event_types=sorted(engine_of(request).manifests),
                next_query=next_query, first_query=filters.query() if after else None)


def _row(doc: dict[str, Any], now: datetime) -> dict[str, Any]:
    return {**doc, "line": present.run_line(doc, now),
            "updated": present.ago_or_ahead(doc["updated_at"], now)}


def _counts(counts: Mapping[RunStatus, int], filters: RunFilters) -> list[dict[str, Any]]:
    """A chip per status, in the dashboard's order, with its count and its filter link."""
    return [{"status": status, "count": counts.get(RunStatus(status), 0),
             "query": filters.query(status=status),
             "active": filters.status is not None and filters.status.value == status}
            for status in present.STATUS_ORDER]


@router.get("/runs/{run_id}", response_class=HTMLResponse)
async def run_page(request: Request, run_id: RunId, who: Who) -> HTMLResponse:
    """One run: status, its explanation, the timeline of its waits, bindings and history."""
    engine = engine_of(request)
    doc = await engine.aio.document(run_id)
    now = engine.clock.now()
    record = await engine.async_store.get_run(run_id)
    return page(request, who, "run.html", live="run_live.html", doc=doc,
                path_svg=await run_path_svg(engine, doc, record.flow_digest, now),
                explanation=explanation(doc), outcome=present.run_line(doc, now),
                wait_line=present.wait_line(doc.get("waiting_for"), now),
                drawing=layout(timeline(doc, now)),
                ended=RunStatus(doc["status"]).is_terminal)


@router.get("/runs/{run_id}/cancel", response_class=HTMLResponse)
async def confirm_cancel(request: Request, run_id: RunId, who: Who) -> HTMLResponse:
    """Ask before cancelling: what the run waits for, and that cancelling is for good."""
    doc = await engine_of(request).aio.document(run_id, history=False)
    if RunStatus(doc["status"]).is_terminal:
        raise PageError(409, "This run has already ended",
                        f"Run {run_id} is {doc['status']}; there is nothing to cancel.")
    back = local_path(request.query_params.get("back"), f"/runs/{run_id}")
    return page(request, who, "cancel.html", doc=doc, explanation=explanation(doc),
                back=back)


@router.post("/runs/{run_id}/cancel")
async def cancel(request: Request, run_id: RunId, who: Who) -> HTMLResponse:
    """Cancel the run (confirmed), then show it, or the page the confirmation came from."""
    form = await form_of(request, who)
    await engine_of(request).aio.cancel(run_id, by=who.principal or "dashboard",
                                        reason=form_text(form, "reason"))
    back = form.get("back")
    raise Redirect(local_path(back if isinstance(back, str) else None, f"/runs/{run_id}"))

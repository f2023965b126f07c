"""Operating runs from the dashboard: retry a failed run (with a reason and corrected inputs),
rerun any run, and cancel or retry every run a filter of the runs page selects — after a
confirmation that shows how many that is — then follow the batch's counts on its page."""

from __future__ import annotations

import json
from typing import Annotated, Any
from urllib.parse import parse_qsl

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import HTMLResponse

from tarry.engine.documents import batch_document
from tarry.model import BatchAction, BatchFilter, RunStatus
from tarry.server.api.context import wake_worker
from tarry.server.api.operate import work_in_background
from tarry.server.calls import off_loop
from tarry.server.dashboard.runs import RunFilters
from tarry.server.dashboard.web import (
    DashboardRoute,
    PageError,
    Redirect,
    Viewer,
    engine_of,
    form_of,
    form_text,
    page,
    viewer,
)

__all__ = ["router"]

router = APIRouter(route_class=DashboardRoute)

RunId = Annotated[str, Path(max_length=200)]
Who = Annotated[Viewer, Depends(viewer)]
Action = Annotated[BatchAction, Path()]

_DONE = {BatchAction.CANCEL: "cancelled", BatchAction.RETRY: "retried"}


@router.get("/runs/{run_id}/retry", response_class=HTMLResponse)
async def confirm_retry(request: Request, run_id: RunId, who: Who) -> HTMLResponse:
    """Ask before retrying a failed run: where it failed, why, and its inputs to correct."""
    doc = await engine_of(request).aio.document(run_id, history=False)
    if doc["status"] != RunStatus.FAILED:
        raise PageError(409, "Only a failed run can be retried",
                        f"Run {run_id} is {doc['status']}; rerun starts a new run instead.")
    return page(request, who, "retry.html", doc=doc,
                inputs=json.dumps(doc["inputs"], indent=2, ensure_ascii=False))


@router.post("/runs/{run_id}/retry")
async def retry(request: Request, run_id: RunId, who: Who) -> HTMLResponse:
    """Retry the run (confirmed) with the inputs of the form, then show it."""
    form = await form_of(request, who)
    engine = engine_of(request)
    await off_loop(engine, engine.retry, run_id, by=who.principal or "dashboard",
                   reason=form_text(form, "reason"), inputs=_inputs(form))
    wake_worker(request)
    raise Redirect(f"/runs/{run_id}")


def _inputs(form: Any) -> dict[str, Any]:
    """The corrected inputs of the retry form (a JSON object; blank: unchanged)."""
    text = form_text(form, "inputs")
    if text is None:
        return {}
    try:
        inputs = json.loads(text)
    except ValueError as exc:
        raise PageError(422, "The inputs are not JSON",
                        f"Write the inputs as one JSON object ({exc}).") from None
    if not isinstance(inputs, dict):
        raise PageError(422, "The inputs are not a JSON object",
                        "Write the inputs as one JSON object, such as {\"region\": \"eu\"}.")
    return inputs


@router.post("/runs/{run_id}/rerun")
async def rerun(request: Request, run_id: RunId, who: Who) -> HTMLResponse:
    """Start a rerun of the run, then show the new run."""
    await form_of(request, who)
    engine = engine_of(request)
    record = await off_loop(engine, engine.rerun, run_id)
    wake_worker(request)
    raise Redirect(f"/runs/{record.id}")


@router.get("/bulk/{action}", response_class=HTMLResponse)
async def confirm_bulk(request: Request, action: Action, who: Who) -> HTMLResponse:
    """Ask before acting on every run the runs page's filter selects: how many they are."""
    filters = RunFilters.of(request.query_params)
    engine = engine_of(request)
    count = await off_loop(engine, engine.count_batch, action, _batch_filter(filters))
    return page(request, who, "bulk.html", action=action, done=_DONE[action],
                filters=filters, count=count, hidden=dict(parse_qsl(filters.query())))


@router.post("/bulk/{action}")
async def bulk(request: Request, action: Action, who: Who) -> HTMLResponse:
    """Start the batch (confirmed) and show its page, where its counts advance."""
    form = await form_of(request, who)
    filters = RunFilters.of({key: value for key, value in form.items()
                             if isinstance(value, str)})
    engine = engine_of(request)
    batch = await off_loop(engine, engine.batch, action, _batch_filter(filters),
                           by=who.principal or "dashboard", reason=form_text(form, "reason"))
    work_in_background(request.app, batch.id)
    raise Redirect(f"/batches/{batch.id}")


@router.get("/batches/{batch_id}", response_class=HTMLResponse)
async def batch_page(request: Request, batch_id: Annotated[str, Path(max_length=200)],
                     who: Who) -> HTMLResponse:
    """A batch: what it does to which runs, and its counts so far."""
    engine = engine_of(request)
    batch = await off_loop(engine, engine.store.get_batch, batch_id)
    filters = RunFilters(batch.filter.status, batch.filter.flow, batch.filter.target,
                         batch.filter.waiting_for)
    return page(request, who, "batch.html", live="batch_live.html", batch=batch,
                doc=batch_document(batch), done=_DONE[batch.action], filters=filters)


def _batch_filter(filters: RunFilters) -> BatchFilter:
    return BatchFilter(flow=filters.flow, status=filters.status, target=filters.target,
                       waiting_for=filters.waiting_for)

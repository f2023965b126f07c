"""``/healthz`` (liveness and whether the store answers) and ``/metrics`` (Prometheus);
neither needs a token, and neither says anything secret."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from tarry.clock import iso
from tarry.errors import StoreError
from tarry.server.api.context import error_responses
from tarry.server.api.models import Health
from tarry.server.calls import off_loop
from tarry.server.errors import RETRY_AFTER_SECONDS
from tarry.server.metrics import CONTENT_TYPE

__all__ = ["router"]

router = APIRouter(tags=["operations"])


@router.get("/healthz", response_model=Health,
            responses={503: {"model": Health, "description": "the store cannot be reached"}})
async def healthz(request: Request) -> JSONResponse:
    """``ok`` (200) while the store answers; ``unavailable`` (503, with ``Retry-After``)
    while it does not. Needs no token."""
    engine = request.app.state.engine
    try:
        await off_loop(engine, engine.store.next_due_at)
        reachable = True
    except StoreError:
        reachable = False
    worker = request.app.state.worker_task
    health = Health(status="ok" if reachable else "unavailable",
                    store="reachable" if reachable else "unreachable",
                    worker="running" if worker is not None and not worker.done() else "stopped",
                    checked_at=iso(engine.clock.now()))
    headers = {} if reachable else {"Retry-After": str(RETRY_AFTER_SECONDS)}
    return JSONResponse(health.model_dump(), status_code=200 if reachable else 503,
                        headers=headers)


@router.get("/metrics", response_class=Response,
            responses={200: {"content": {CONTENT_TYPE: {"schema": {"type": "string"}}},
                             "description": "Prometheus text format"},
                       **error_responses(503)})
async def metrics(request: Request) -> Response:
    """Runs by status, wake lateness, send-to-resume, events and checks by outcome, claim
    and checkpoint durations, event-loop lag (see :mod:`tarry.server.metrics`)."""
    engine = request.app.state.engine
    text = await off_loop(engine, request.app.state.metrics.render)
    return Response(text, media_type=CONTENT_TYPE)

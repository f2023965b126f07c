"""``/healthz``: liveness and whether the store answers (no authentication)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from tarry.clock import iso
from tarry.errors import StoreError
from tarry.server.api.models import Health
from tarry.server.calls import off_loop
from tarry.server.errors import RETRY_AFTER_SECONDS

__all__ = ["router"]

router = APIRouter(tags=["operations"])


@router.get("/healthz", response_model=Health,
            responses={503: {"model": Health, "description": "the store cannot be reached"}})
async def healthz(request: Request) -> JSONResponse:
    """``ok`` (200) while the store answers; ``unavailable`` (503, with ``Retry-After``)
    while it does not. Needs no token."""
    engine = request.app.state.engine
    try:
        await off_loop(engine.store.next_due_at)
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

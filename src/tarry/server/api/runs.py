"""``/v1/runs``: start, list, read and cancel runs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request

from tarry.model import RunStatus
from tarry.server.api.context import EngineDep, error_responses, wake_worker
from tarry.server.api.models import RunDocument, RunList, StartRun
from tarry.server.auth import Principal, principal_of_request
from tarry.server.calls import off_loop

__all__ = ["router"]

router = APIRouter(prefix="/v1/runs", tags=["runs"],
                   dependencies=[Depends(principal_of_request)],
                   responses=error_responses(401, 503))

RunId = Annotated[str, Path(description="The run's id.", max_length=200)]


@router.post("", status_code=201, response_model=RunDocument,
             responses=error_responses(400, 404, 409, 413, 422))
async def start_run(body: StartRun, request: Request, engine: EngineDep) -> dict[str, Any]:
    """Start a run of a flow; a held flow (or ``hold_after``) creates a held run."""
    record = await off_loop(engine.start, body.flow, body.inputs, target=body.target,
                            hold_after=body.hold_after)
    wake_worker(request)
    return await off_loop(engine.document, record.id)


@router.get("", response_model=RunList, response_model_exclude_none=False,
            responses=error_responses(422))
async def list_runs(engine: EngineDep,
                    status: Annotated[RunStatus | None, Query()] = None,
                    flow: Annotated[str | None, Query(max_length=512)] = None,
                    limit: Annotated[int, Query(ge=1, le=500)] = 50) -> dict[str, Any]:
    """Runs, newest first, filtered."""
    records = await off_loop(engine.store.list_runs, status=status, flow=flow, limit=limit)
    documents = [await off_loop(engine.document, r.id, history=False) for r in records]
    return {"runs": documents, "next_cursor": None}


@router.get("/{run_id}", response_model=RunDocument, responses=error_responses(404))
async def get_run(run_id: RunId, engine: EngineDep) -> dict[str, Any]:
    """One run with its history."""
    return await off_loop(engine.document, run_id)


@router.post("/{run_id}/cancel", response_model=RunDocument,
             responses=error_responses(404, 409))
async def cancel_run(run_id: RunId, engine: EngineDep, principal: Principal) -> dict[str, Any]:
    """Cancel a run: at once when held, pending or waiting; a running one at its next
    checkpoint. 409 when it has already ended."""
    await off_loop(engine.cancel, run_id, by=principal)
    return await off_loop(engine.document, run_id)

"""``/v1/runs``: start, list, read and cancel runs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path, Query, Request, Response

from tarry.engine.documents import run_document
from tarry.engine.runtime import Engine
from tarry.model import RunStatus
from tarry.server.api import idempotency
from tarry.server.api.context import EngineDep, error_responses, wake_worker
from tarry.server.api.models import CancelRun, RunDocument, RunList, StartRun
from tarry.server.api.paging import Cursor, Limit, decode_cursor, encode_cursor
from tarry.server.auth import Principal, principal_of_request
from tarry.server.calls import off_loop

__all__ = ["router", "run_page"]

router = APIRouter(prefix="/v1/runs", tags=["runs"],
                   dependencies=[Depends(principal_of_request)],
                   responses=error_responses(401, 503))

RunId = Annotated[str, Path(description="The run's id.", max_length=200)]
REPLAYED_HEADER = "Idempotent-Replayed"


@router.post("", status_code=201, response_model=RunDocument,
             responses=error_responses(400, 404, 409, 422))
async def start_run(body: StartRun, *, request: Request, response: Response,
                    engine: EngineDep, principal: Principal,
                    idempotency_key: idempotency.IdempotencyKey = None) -> dict[str, Any]:
    """Start a run of a flow of the project, by name; a held flow (or ``hold_after``)
    creates a held run. Anything that is not the name of a flow of the project (a path
    included) is 404.

    With ``Idempotency-Key``, a retry of the same request returns the run the first one
    created (header ``Idempotent-Replayed: true``); the same key with another request is 409.
    """
    key = idempotency.check_key(idempotency_key)
    if key is None:
        record = await engine.aio.start(body.flow, body.inputs, target=body.target,
                                        hold_after=body.hold_after, by_name=True)
    else:
        record, replayed = await off_loop(engine, idempotency.start_once, engine, principal,
                                          key, body)
        response.headers[REPLAYED_HEADER] = "true" if replayed else "false"
    document = await off_loop(engine, engine.document, record.id)
    wake_worker(request)
    return document


@router.get("", response_model=RunList, responses=error_responses(400, 422))
async def list_runs(
        *, engine: EngineDep,
        status: Annotated[RunStatus | None, Query(description="Only runs with this status.")]
        = None,
        flow: Annotated[str | None, Query(max_length=512)] = None,
        target: Annotated[str | None, Query(max_length=512)] = None,
        waiting_for: Annotated[str | None, Query(max_length=512, description=(
            "timer, event, hold, poll, task, retry, child, slot, throttle, window, or an event "
            "type (any of the run's event waits)."))] = None,
        at_step: Annotated[str | None, Query(max_length=512, description=(
            "A step of the run's flow, without loop indices (quotes.request): runs waiting "
            "at it, or failed at it."))] = None,
        cursor: Cursor = None, limit: Limit = 50) -> dict[str, Any]:
    """Runs, newest first, filtered, in keyset pages (history left out). A ``waiting_for``
    that is neither a kind of wait nor a declared event type is a 422."""
    engine.check_wait_filter(waiting_for)
    return await run_page(engine, cursor, limit, status=status, flow=flow, target=target,
                          waiting_for=waiting_for, at_step=at_step)


async def run_page(engine: Engine, cursor: str | None, limit: int,
                   **filters: Any) -> dict[str, Any]:
    """One page of runs (a :class:`RunList`), filtered as ``Store.list_runs`` is."""
    after = decode_cursor(cursor, 1)
    records = await off_loop(engine, engine.store.list_runs, **filters, limit=limit + 1,
                             after=(after[0], after[1][0]) if after else None)
    page = records[:limit]
    more = len(records) > limit
    journals = await off_loop(engine, engine.store.journals, [record.id for record in page])
    return {"runs": [run_document(record, None, journals.get(record.id, []))
                     for record in page],
            "next_cursor": encode_cursor(page[-1].created_at, page[-1].id) if more else None}


@router.get("/{run_id}", response_model=RunDocument,
            responses=error_responses(404, 422))
async def get_run(run_id: RunId, engine: EngineDep) -> dict[str, Any]:
    """One run with its history."""
    return await off_loop(engine, engine.document, run_id)


@router.post("/{run_id}/cancel", response_model=RunDocument,
             responses=error_responses(400, 404, 409, 422))
async def cancel_run(run_id: RunId, engine: EngineDep, principal: Principal,
                     body: Annotated[CancelRun | None, Body()] = None) -> dict[str, Any]:
    """Cancel a run: at once when held, pending or waiting; a running one at its next
    checkpoint. 409 when it has already ended. The history records the principal and the
    ``reason`` given."""
    await off_loop(engine, engine.cancel, run_id, by=principal,
                   reason=body.reason if body else None)
    return await off_loop(engine, engine.document, run_id)

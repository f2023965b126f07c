"""Operating runs over HTTP: retry, rerun, batches over the runs a filter selects
(``POST /v1/runs/batch``, ``GET /v1/batches/{id}``), and moving the waiting runs of a flow to
its current definition (``POST /v1/runs/migrate``).

A batch is recorded with its count and answered at once (202); the server then works
through it in the background, one short transaction per page, so its counts advance while
the worker's timers keep waking on time. A batch a stopped server left unfinished is resumed
by the next one that starts.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, FastAPI, Path, Request

from tarry.engine.documents import batch_document
from tarry.engine.operating import REST
from tarry.engine.runtime import Engine
from tarry.errors import InvalidRunRequest, StoreError
from tarry.language.durations import parse_duration
from tarry.model import BatchFilter
from tarry.server.api.context import EngineDep, error_responses, wake_worker
from tarry.server.api.models import (
    BatchDocument,
    MigrateRuns,
    MoveDocument,
    RerunRun,
    RetryRun,
    RunDocument,
    StartBatch,
)
from tarry.server.auth import Principal, principal_of_request
from tarry.server.calls import off_loop

__all__ = ["resume_batches", "router", "stop_batches", "work_in_background"]

logger = logging.getLogger("tarry.server")

router = APIRouter(prefix="/v1", tags=["operating"],
                   dependencies=[Depends(principal_of_request)],
                   responses=error_responses(401, 413, 503))

RunId = Annotated[str, Path(description="The run's id.", max_length=200)]


@router.post("/runs/batch", status_code=202, response_model=BatchDocument,
             responses=error_responses(400, 422))
async def start_batch(body: StartBatch, *, request: Request, engine: EngineDep,
                      principal: Principal) -> dict[str, Any]:
    """Cancel or retry every run the filter selects, created before this request. Answers
    at once with the batch document; its counts advance as it works (``GET
    /v1/batches/{id}``)."""
    batch = await off_loop(engine, engine.batch, body.action, _selected(body, engine),
                           by=principal, reason=body.reason)
    work_in_background(request.app, batch.id)
    return batch_document(batch)


@router.post("/runs/migrate", response_model=MoveDocument, response_model_by_alias=True,
             responses=error_responses(400, 404, 422))
async def migrate_runs(body: MigrateRuns, *, request: Request, engine: EngineDep,
                       principal: Principal) -> dict[str, Any]:
    """Move the held and waiting runs of a YAML flow to its current definition, each in a
    short transaction of its own (``dry_run``: only judge them): every run with what became
    of it, and why a run cannot move. 422 for a Python flow (its runs replay the current
    code) or a flow file that does not load."""
    report = await off_loop(engine, engine.migrate_runs, body.flow, by=principal,
                            dry_run=body.dry_run, by_name=True)
    if not body.dry_run:
        wake_worker(request)
    return report.document()


@router.get("/batches/{batch_id}", response_model=BatchDocument,
            responses=error_responses(404, 422))
async def get_batch(batch_id: Annotated[str, Path(max_length=200)],
                    engine: EngineDep) -> dict[str, Any]:
    """A batch, with its counts so far."""
    return batch_document(await off_loop(engine, engine.store.get_batch, batch_id))


@router.post("/runs/{run_id}/retry", response_model=RunDocument,
             responses=error_responses(400, 404, 409, 422))
async def retry_run(run_id: RunId, *, request: Request, engine: EngineDep,
                    principal: Principal,
                    body: Annotated[RetryRun | None, Body()] = None) -> dict[str, Any]:
    """Retry a failed run from the step that failed, on the definition it started with;
    ``inputs`` replace those of the same names for what is still to run. 409 unless the run
    failed."""
    given = body or RetryRun()
    await off_loop(engine, engine.retry, run_id, by=principal, reason=given.reason,
                   inputs=given.inputs)
    wake_worker(request)
    return await off_loop(engine, engine.document, run_id)


@router.post("/runs/{run_id}/rerun", status_code=201, response_model=RunDocument,
             responses=error_responses(400, 404, 422))
async def rerun_run(run_id: RunId, *, request: Request, engine: EngineDep,
                    body: Annotated[RerunRun | None, Body()] = None) -> dict[str, Any]:
    """Start a new run of the run's flow (its current definition) with the same inputs and
    target (``inputs`` replace those of the same names), linked both ways (``rerun_of``,
    ``reruns``): 201 with the new run's document."""
    record = await off_loop(engine, engine.rerun, run_id,
                            inputs=(body or RerunRun()).inputs)
    wake_worker(request)
    return await off_loop(engine, engine.document, record.id)


def _selected(body: StartBatch, engine: Engine) -> BatchFilter:
    given = body.filter
    before = None
    if given.older_than is not None:
        try:
            before = engine.clock.now() - parse_duration(given.older_than)
        except ValueError as exc:
            raise InvalidRunRequest(f"filter.older_than: {exc}") from None
    return BatchFilter(flow=given.flow, status=given.status, waiting_for=given.waiting_for,
                       target=given.target, created_before=before)


def work_in_background(app: FastAPI, batch_id: str) -> None:
    """Work the batch to its end in a task of the server (kept until it finishes)."""
    engine: Engine = app.state.engine
    tasks: set[asyncio.Task[None]] = app.state.batches
    task = asyncio.create_task(_work(engine, batch_id))
    tasks.add(task)
    task.add_done_callback(tasks.discard)


async def resume_batches(app: FastAPI) -> None:
    """Go on with the batches a stopped server left unfinished (at the server's start)."""
    engine: Engine = app.state.engine
    try:
        unfinished = await engine.async_store.unfinished_batches()
    except StoreError:  # the store is down: nothing to resume until the next start
        logger.exception("could not look for unfinished batches")
        return
    for batch_id in unfinished:
        work_in_background(app, batch_id)


async def stop_batches(app: FastAPI) -> None:
    """Stop the batches in progress (at the server's stop): each stops between two pages,
    and the next server to start goes on with it."""
    tasks: set[asyncio.Task[None]] = app.state.batches
    for task in list(tasks):
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _work(engine: Engine, batch_id: str) -> None:
    """One page after another, each its own transaction, resting between them
    (:data:`~tarry.engine.operating.REST`), until the batch is done."""
    loop = asyncio.get_running_loop()
    try:
        while True:
            began = loop.time()
            if (await off_loop(engine, engine.work_batch, batch_id)).done:
                return
            await asyncio.sleep((loop.time() - began) * REST)
    except Exception:  # the store failed: the batch stays running, resumed at the next start
        logger.exception("batch %s stopped", batch_id)

"""``/v1/tasks``: the inbox of tasks for people, and completing one.

A completion is made as the request's principal (its bearer token's name; ``anonymous`` on a
loopback server without tokens): 403 when the task is assigned to others, 422 with every
reason when the outcome or the data do not fit, 409 when it is no longer open or past its
deadline (a task completes once), 404 for an unknown id. The run is woken at once.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request

from tarry.engine.documents import task_document
from tarry.model import TaskState
from tarry.server.api.context import EngineDep, error_responses, wake_worker
from tarry.server.api.models import CompleteTask, TaskDocument, TaskList
from tarry.server.auth import Principal, principal_of_request
from tarry.server.calls import off_loop

__all__ = ["router"]

router = APIRouter(prefix="/v1/tasks", tags=["tasks"],
                   dependencies=[Depends(principal_of_request)],
                   responses=error_responses(401, 503))

TaskId = Annotated[str, Path(description="The task's id.", max_length=200)]


@router.get("", response_model=TaskList, responses=error_responses(422))
async def list_tasks(
        *, engine: EngineDep, principal: Principal,
        state: Annotated[TaskState | None, Query(
            description="Only tasks in this state (default: open ones).")] = TaskState.OPEN,
        every: Annotated[bool, Query(alias="all", description="Every task, whatever its "
                                                              "state.")] = False,
        mine: Annotated[bool, Query(description="Only the tasks the caller may complete.")]
        = False,
        limit: Annotated[int, Query(ge=1, le=500)] = 100) -> dict[str, Any]:
    """Tasks, newest first: the open ones unless told otherwise."""
    records = await off_loop(engine, engine.tasks, state=None if every else state,
                             principal=principal if mine else None, limit=limit)
    return {"tasks": [task_document(record) for record in records]}


@router.post("/{task_id}/complete", response_model=TaskDocument,
             responses=error_responses(400, 403, 404, 409, 422))
async def complete_task(task_id: TaskId, body: CompleteTask, request: Request,
                        engine: EngineDep, principal: Principal) -> dict[str, Any]:
    """Complete a task as the caller, with an outcome and the form's data; its run resumes."""
    record = await engine.aio.complete_task(task_id, outcome=body.outcome, data=body.data,
                                            by=principal)
    wake_worker(request)
    return task_document(record)

"""The task inbox (tasks for people): the open tasks, the signed-in principal's or
everyone's, with their runs, deadlines and reminders, and the completed ones; one task's page,
whose form is drawn from the task's JSON Schema (:mod:`.taskform`) and completed through the
same checks as ``POST /v1/tasks/{id}/complete``: a refusal is shown on the page with the
reasons (422), the completion that came first (409) or the assignees (403)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import HTMLResponse

from tarry.engine.documents import task_document
from tarry.engine.taskforms import may_complete
from tarry.errors import InvalidTaskCompletion, TaskForbidden, TaskStateError
from tarry.model import TaskRecord, TaskState
from tarry.server.api.context import wake_worker
from tarry.server.auth import ANONYMOUS
from tarry.server.dashboard import present
from tarry.server.dashboard.taskform import TaskForm, read_answer, task_form
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

__all__ = ["COMPLETED_SHOWN", "OPEN_SHOWN", "VIEWS", "acting", "router", "task_row"]

router = APIRouter(route_class=DashboardRoute)

TaskId = Annotated[str, Path(max_length=200)]
Who = Annotated[Viewer, Depends(viewer)]

VIEWS = ("mine", "all")
"""The inbox's switch: the open tasks the viewer may complete, or every open task."""

OPEN_SHOWN = 200
"""How many open tasks the inbox lists (the newest)."""

COMPLETED_SHOWN = 50
"""How many completed tasks the inbox lists (the newest)."""


def acting(who: Viewer) -> str:
    """The principal a completion from this viewer is made as (``anonymous`` on a server
    without tokens, as in the API)."""
    return who.principal or ANONYMOUS


def task_row(record: TaskRecord, now: datetime) -> dict[str, Any]:
    """What the dashboard shows of a task: its task document, with how far its deadline
    is (``in 2d 23h``) and when it was completed (``4m 2s ago``)."""
    doc = task_document(record)
    return {**doc, "until_in": present.ago_or_ahead(doc["until"], now),
            "completed_ago": present.ago_or_ahead(doc["completed_at"], now)}


@router.get("/tasks", response_class=HTMLResponse)
async def tasks_page(request: Request, who: Who) -> HTMLResponse:
    """The open tasks (the viewer's, or everyone's), newest first, and the completed ones."""
    view = query_text(request.query_params, "view") or "mine"
    if view not in VIEWS:
        raise PageError(400, "Unknown view", f"There is no view '{view}' of the tasks; choose "
                                             f"one of: {', '.join(VIEWS)}.")
    engine, principal = engine_of(request), acting(who)
    open_tasks = await engine.aio.tasks(state=TaskState.OPEN, limit=OPEN_SHOWN)
    completed = await engine.aio.tasks(state=TaskState.COMPLETED, limit=COMPLETED_SHOWN)
    mine = [task for task in open_tasks if may_complete(task.request, principal)]
    if view == "mine":
        completed = [task for task in completed if may_complete(task.request, principal)]
    now = engine.clock.now()
    return page(request, who, "tasks.html", live="tasks_live.html", view=view,
                principal=principal, counts={"mine": len(mine), "all": len(open_tasks)},
                open=[task_row(task, now) for task in (mine if view == "mine" else open_tasks)],
                completed=[task_row(task, now) for task in completed],
                more=len(open_tasks) == OPEN_SHOWN, open_shown=OPEN_SHOWN)


@router.get("/tasks/{task_id}", response_class=HTMLResponse)
async def task_page(request: Request, task_id: TaskId, who: Who) -> HTMLResponse:
    """One task: what is asked, of whom, until when, and its form with a button per
    outcome (once completed: by whom, when, and the answer)."""
    record = await engine_of(request).async_store.get_task(task_id)
    form = task_form(record.request.form)
    return _task_page(request, who, record, form, form.initial_values())


@router.post("/tasks/{task_id}/complete", response_class=HTMLResponse)
async def complete(request: Request, task_id: TaskId, who: Who) -> HTMLResponse:
    """Complete the task with the pressed outcome and the form's data, as the viewer; a
    refusal shows the task again, with what was typed and why."""
    submitted = {key: value for key, value in (await form_of(request, who)).multi_items()
                 if isinstance(value, str)}
    engine = engine_of(request)
    record = await engine.async_store.get_task(task_id)
    form = task_form(record.request.form)
    answer = read_answer(form, submitted)
    try:
        await engine.aio.complete_task(task_id, outcome=submitted.get("outcome"),
                                       data=answer.data, by=acting(who))
    except InvalidTaskCompletion as refused:
        return _task_page(request, who, record, form, submitted, status=422,
                          problems=[*refused.problems, *answer.not_json])
    except (TaskForbidden, TaskStateError) as refused:
        record = await engine.async_store.get_task(task_id)
        return _task_page(request, who, record, form, submitted, refusal=str(refused),
                          status=403 if isinstance(refused, TaskForbidden) else 409)
    wake_worker(request)
    raise Redirect(f"/tasks/{task_id}")


def _task_page(request: Request, who: Viewer, record: TaskRecord, form: TaskForm,
               values: Mapping[str, str], *, status: int = 200, problems: list[str] | None = None,
               refusal: str | None = None) -> HTMLResponse:
    now = engine_of(request).clock.now()
    principal = acting(who)
    return page(request, who, "task.html", live="task_live.html", status=status,
                task=task_row(record, now), form=form, values=values, problems=problems or [],
                refusal=refusal, principal=principal,
                may_complete=may_complete(record.request, principal),
                answerable=record.state is TaskState.OPEN and now < record.request.until)

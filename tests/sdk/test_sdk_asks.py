"""ctx.ask through the real engine (SPEC 3.7), on both stores: the same task as the YAML ask,
listed and completed by a person as a principal, the result shape on completion and on
timeout, replay, and the refusals of bad arguments."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sdk_support import START, HarnessFor

from tarry import App, Context, TaskResult
from tarry.errors import TaskForbidden
from tarry.model import RunStatus, TaskState

FORM = {"type": "object", "required": ["note"], "properties": {"note": {"type": "string"}}}


def review_app(calls: list[str]) -> App:
    app = App()

    @app.flow("review")
    async def review(ctx: Context, amount: int) -> dict[str, Any]:
        calls.append("ran")
        answer = await ctx.ask("review", title=f"Approve {amount}?",
                               outcomes=["approve", "reject"], assign=["ops", "alice"],
                               form=FORM, timeout="2d", details="A large one.")
        return {"status": answer.status, "outcome": answer.outcome, "data": answer.data,
                "by": answer.by,
                "at": answer.completed_at.isoformat() if answer.completed_at else None}

    return app


async def test_a_person_completes_the_task_and_the_flow_gets_the_answer(
        harness_for: HarnessFor) -> None:
    calls: list[str] = []
    harness = harness_for(review_app(calls))
    run_id = harness.start("review", {"amount": 900})
    await harness.run_due()
    record = harness.record(run_id)
    assert record.status is RunStatus.WAITING
    assert record.waiting_for is not None
    assert record.waiting_for["kind"] == "task"
    task = harness.task(run_id, "review")
    assert (task.request.title, task.request.details, task.request.assign,
            task.request.form, task.request.until) == (
        "Approve 900?", "A large one.", ("ops", "alice"), FORM, START + timedelta(days=2))
    with pytest.raises(TaskForbidden):
        harness.complete_task(run_id, "review", outcome="approve", data={"note": "x"},
                              by="bob")
    await harness.advance(timedelta(hours=3))
    harness.complete_task(run_id, "review", outcome="approve", data={"note": "ok"}, by="alice")
    await harness.run_until_idle()
    assert harness.record(run_id).result == {
        "status": "completed", "outcome": "approve", "data": {"note": "ok"}, "by": "alice",
        "at": "2026-03-01T12:00:00+00:00"}
    assert harness.task(run_id, "review").state is TaskState.COMPLETED
    assert len(calls) == 2  # once to ask, once to resume: the task was opened once


async def test_the_deadline_gives_a_timeout_result(harness_for: HarnessFor) -> None:
    harness = harness_for(review_app([]))
    run_id = harness.start("review", {"amount": 5})
    await harness.run_until_idle()
    assert harness.record(run_id).result == {"status": "timeout", "outcome": None,
                                             "data": None, "by": None, "at": None}
    assert harness.task(run_id, "review").state is TaskState.TIMEOUT
    assert harness.clock.now() == START + timedelta(days=2)


def test_the_result_reads_the_recorded_outcome() -> None:
    result = TaskResult.of({"status": "completed", "outcome": "a", "data": {}, "by": "x",
                            "completed_at": "2026-03-01T09:00:00.000Z"})
    assert (result.status, result.completed_at) == ("completed", START)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"outcomes": []}, "ValueError: ask 'q': outcomes must be a list of one or more names "
                       "matching [a-z0-9][a-z0-9_.-]*, such as ['approve', 'reject'], got []"),
    ({"outcomes": ["go", "go"]}, "ValueError: ask 'q': an outcome is listed twice in "
                                 "['go', 'go']"),
    ({"form": {"type": "object", "properties": 3}},
     "ValueError: ask 'q': form is not a valid JSON Schema: 3 is not of type 'object'"),
    ({"form": {"properties": {"note": {"pattern": "(a)\\1"}}}},
     "ValueError: ask 'q': form is not a valid JSON Schema: pattern '(a)\\\\1' cannot be "
     "used: invalid escape sequence: \\1 (schema patterns run in linear time, without "
     "backreferences or lookaround)"),
    ({"assign": []}, "ValueError: ask 'q': assign must be principal names such as "
                     "['ops', 'alice'], got []"),
    ({"timeout": "soon"}, "ValueError: ask 'q': timeout: 'soon' is not a duration (use e.g. "
                          "500ms, 30s, 15m, 24h, 2d, 1w, 1h30m or ISO 8601 like PT30S)"),
])
async def test_bad_arguments_fail_the_run(harness_for: HarnessFor, kwargs: dict[str, Any],
                                          message: str) -> None:
    app = App()

    @app.flow("misused")
    async def flow(ctx: Context) -> None:
        arguments: dict[str, Any] = {"outcomes": ["go"], "timeout": "1h", **kwargs}
        await ctx.ask("q", title="Go?", **arguments)

    harness = harness_for(app)
    run_id = harness.start("misused")
    await harness.run_due()
    assert harness.record(run_id).error == {"type": "exception", "message": message,
                                            "step": None}

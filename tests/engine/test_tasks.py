"""Tasks for people (SPEC 3.7) through the real engine on a virtual clock, on both stores: the
binding, the deadline, reminders, who may complete, what they may answer, once only, the
history, the task's life in the store, and per-branch tasks."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tarry.engine.taskforms import completion_problems
from tarry.errors import InvalidTaskCompletion, TaskForbidden, TaskNotFound, TaskStateError
from tarry.model import RunStatus, TaskRequest, TaskState
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

REVIEW = """
flow: review
inputs:
  request: { type: object, required: true }
steps:
  - review:
      ask:
        title: "Review the reply to {{ request.id }}"
        details: "{{ request.issue }}"
        assign: [ops, alice]
        form:
          type: object
          required: [note]
          properties:
            note: { type: string, description: What to tell the sender }
            amount: { type: number }
        outcomes: [accept, correct]
      timeout: 3d
      remind:
        every: 1d
        steps:
          - nudge: { log: { message: "still waiting on {{ request.id }}" } }
  - decided:
      if: "{{ review.status == 'completed' and review.outcome == 'accept' }}"
      exit: accepted
  - lapsed:
      exit: unanswered
"""

INPUTS = {"request": {"id": "R-7", "issue": "the amount is missing"}}


ANYONE = """
flow: anyone
steps:
  - ok:
      ask: { title: "Go?", outcomes: [go, stop] }
      timeout: 1h
"""


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    h = Harness(tmp_path, start=START, store_url=store_url)
    yield h
    h.close()


async def asked(harness: Harness, source: str = REVIEW,
                inputs: dict[str, Any] | None = None) -> str:
    """Start a run of ``source`` and let it reach its task."""
    run_id = harness.start(harness.flow(source), INPUTS if inputs is None else inputs)
    await harness.run_due()
    return run_id


def history(harness: Harness, run_id: str, kind: str) -> list[dict[str, Any]]:
    return [e.data for e in harness.engine.store.history(run_id) if e.kind == kind]


async def test_a_task_waits_with_its_rendered_request(harness: Harness) -> None:
    run_id = await asked(harness)
    task = harness.task(run_id, "review")
    record = harness.record(run_id)
    assert record.status is RunStatus.WAITING
    assert record.due_at == START + timedelta(days=1)  # the first reminder
    assert record.waiting_for == {"kind": "task", "step": "review",
                                  "until": "2026-03-04T09:00:00.000Z", "event_type": None,
                                  "match": None, "since": "2026-03-01T09:00:00.000Z",
                                  "others": 0, "task": task.id,
                                  "next_reminder": "2026-03-02T09:00:00.000Z"}
    assert (task.state, task.run_id, task.flow) == (TaskState.OPEN, run_id, "review")
    assert task.request == TaskRequest(
        id=task.id, step="review", title="Review the reply to R-7",
        outcomes=("accept", "correct"), created_at=START, until=START + timedelta(days=3),
        details="the amount is missing", assign=("ops", "alice"),
        form={"type": "object", "required": ["note"],
              "properties": {"note": {"type": "string", "description": "What to tell the sender"},
                             "amount": {"type": "number"}}})
    assert history(harness, run_id, "wait.registered") == [
        {"kind": "task", "until": "2026-03-04T09:00:00.000Z", "task": task.id,
         "assign": ["ops", "alice"]}]


async def test_a_completion_resumes_the_run_with_the_answer(harness: Harness) -> None:
    run_id = await asked(harness)
    await harness.advance(timedelta(hours=5))
    completed = harness.complete_task(run_id, "review", outcome="accept",
                                      data={"note": "fine", "amount": 12}, by="alice")
    assert completed.state is TaskState.COMPLETED
    assert harness.record(run_id).due_at == START + timedelta(hours=5)  # woken at once
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert (document["status"], document["exit"]) == ("succeeded", "accepted")
    assert document["bindings"]["review"] == {
        "status": "completed", "outcome": "accept", "data": {"note": "fine", "amount": 12},
        "by": "alice", "completed_at": "2026-03-01T14:00:00.000Z"}
    assert history(harness, run_id, "task.completed") == [
        {"task": completed.id, "outcome": "accept", "by": "alice"}]
    assert harness.clock.now() == START + timedelta(hours=5)


async def test_the_deadline_ends_the_task_as_a_value_not_a_failure(harness: Harness) -> None:
    run_id = await asked(harness)
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert (document["status"], document["exit"]) == ("succeeded", "unanswered")
    assert document["bindings"]["review"] == {"status": "timeout", "outcome": None,
                                              "data": None, "by": None, "completed_at": None}
    task = harness.task(run_id, "review")
    assert (task.state, task.request.reminders) == (TaskState.TIMEOUT, 2)
    assert harness.clock.now() == START + timedelta(days=3)
    assert history(harness, run_id, "reminder.sent") == [
        {"count": n, "task": task.id, "assign": ["ops", "alice"]} for n in (1, 2)]


async def test_reminders_so_far_are_kept_on_the_task(harness: Harness) -> None:
    run_id = await asked(harness)
    await harness.advance(timedelta(days=1, hours=1))
    assert harness.task(run_id, "review").request.reminders == 1
    assert harness.record(run_id).waiting_for["kind"] == "task"


async def test_a_completion_after_the_deadline_loses_even_before_the_timeout_ran(
        harness: Harness) -> None:
    run_id = await asked(harness, ANYONE, {})
    harness.clock.set(START + timedelta(hours=1))  # no worker has run the timeout yet
    task = harness.task(run_id, "ok")
    with pytest.raises(TaskStateError) as refused:
        harness.complete_task(run_id, "ok", outcome="go")
    assert str(refused.value) == (f"task '{task.id}' timed out at 2026-03-01T10:00:00.000Z; it "
                                  "can no longer be completed")
    assert refused.value.details == {"kind": "task", "key": task.id, "state": "timeout"}
    await harness.run_until_idle()
    assert harness.document(run_id)["bindings"]["ok"]["status"] == "timeout"
    assert harness.task(run_id, "ok").state is TaskState.TIMEOUT


async def test_a_task_completes_once(harness: Harness) -> None:
    run_id = await asked(harness)
    first = harness.complete_task(run_id, "review", outcome="correct", data={"note": "a"},
                                  by="ops")
    with pytest.raises(TaskStateError) as refused:
        harness.complete_task(run_id, "review", outcome="accept", data={"note": "b"},
                              by="alice")
    assert str(refused.value) == (f"task '{first.id}' was already completed by ops at "
                                  "2026-03-01T09:00:00.000Z (correct); a task completes once")
    await harness.run_until_idle()
    assert harness.document(run_id)["bindings"]["review"]["outcome"] == "correct"
    assert len(history(harness, run_id, "task.completed")) == 1
    assert history(harness, run_id, "task.refused") == []


async def test_someone_not_assigned_is_refused_and_it_is_recorded(harness: Harness) -> None:
    run_id = await asked(harness)
    task = harness.task(run_id, "review")
    with pytest.raises(TaskForbidden) as refused:
        harness.complete_task(run_id, "review", outcome="accept", data={"note": "x"},
                              by="mallory")
    message = f"task '{task.id}' is assigned to ops, alice; 'mallory' may not complete it"
    assert str(refused.value) == message
    assert refused.value.details == {"principal": "mallory", "task": task.id,
                                     "assign": ["ops", "alice"]}
    assert history(harness, run_id, "task.refused") == [
        {"task": task.id, "by": "mallory", "reason": "forbidden", "problems": [message]}]
    assert harness.task(run_id, "review").state is TaskState.OPEN


@pytest.mark.parametrize(("outcome", "data", "problems"), [
    ("acept", {"note": "x"},
     ["outcome 'acept' is not one of the task's outcomes (accept, correct) (did you mean "
      "'accept'?)"]),
    (3, {"note": "x"}, ["outcome 3 is not one of the task's outcomes (accept, correct)"]),
    ("accept", {}, ["data: 'note' is a required property"]),
    ("accept", {"note": 5, "amount": "ten"},
     ["data: amount: 'ten' is not of type 'number'", "data: note: 5 is not of type 'string'"]),
    ("accept", ["note"], ["data must be a JSON object, got list"]),
    ("accept", {"note": "a\u0000b"},
     ["the task's data: at note: a NUL character (\\u0000) is not allowed in text (no store "
      "keeps it)"]),
])
async def test_an_answer_that_does_not_fit_is_refused_with_every_reason(
        harness: Harness, outcome: Any, data: Any, problems: list[str]) -> None:
    run_id = await asked(harness)
    task = harness.task(run_id, "review")
    with pytest.raises(InvalidTaskCompletion) as refused:
        harness.engine.complete_task(task.id, outcome=outcome, data=data, by="alice")
    assert refused.value.problems == problems
    assert history(harness, run_id, "task.refused") == [
        {"task": task.id, "by": "alice", "reason": "invalid", "problems": problems}]
    assert harness.task(run_id, "review").state is TaskState.OPEN


async def test_an_unknown_task_is_not_found(harness: Harness) -> None:
    with pytest.raises(TaskNotFound) as missing:
        harness.engine.complete_task("nope", outcome="accept", by="alice")
    assert str(missing.value) == "no task with id 'nope'"




async def test_without_assign_anyone_may_complete_and_without_a_form_no_data_is_taken(
        harness: Harness) -> None:
    run_id = await asked(harness, ANYONE, {})
    task = harness.task(run_id, "ok")
    with pytest.raises(InvalidTaskCompletion) as refused:
        harness.complete_task(run_id, "ok", outcome="go", data={"why": "x"}, by="anybody")
    assert refused.value.problems == ["this task has no form: send no data"]
    harness.complete_task(run_id, "ok", outcome="go", by="anybody")
    await harness.run_until_idle()
    assert harness.document(run_id)["bindings"]["ok"] == {
        "status": "completed", "outcome": "go", "data": {}, "by": "anybody",
        "completed_at": "2026-03-01T09:00:00.000Z"}
    assert harness.task(run_id, "ok").id == task.id


async def test_assignees_may_be_computed(harness: Harness) -> None:
    source = """
flow: computed
inputs:
  owner: { type: string, required: true }
steps:
  - ok:
      ask: { title: "Go?", outcomes: [go], assign: "{{ [owner, 'ops'] }}" }
      timeout: 1h
"""
    run_id = await asked(harness, source, {"owner": "carol"})
    assert harness.task(run_id, "ok").request.assign == ("carol", "ops")


async def test_assignees_that_are_not_names_fail_the_step(harness: Harness) -> None:
    source = """
flow: computed
steps:
  - ok:
      ask: { title: "Go?", outcomes: [go], assign: "{{ 5 }}" }
      timeout: 1h
"""
    run_id = await asked(harness, source, {})
    assert harness.record(run_id).error == {
        "type": "expression", "step": "ok",
        "message": "'assign' must give principal names (a list of non-empty strings), got 5"}


async def test_cancelling_the_run_cancels_its_open_task(harness: Harness) -> None:
    run_id = await asked(harness)
    harness.engine.cancel(run_id, by="ops")
    task = harness.task(run_id, "review")
    assert task.state is TaskState.CANCELLED
    with pytest.raises(TaskStateError) as refused:
        harness.complete_task(run_id, "review", outcome="accept", data={"note": "x"},
                              by="alice")
    assert str(refused.value) == (f"task '{task.id}' was cancelled: its run no longer waits "
                                  "for it")


PER_ITEM = """
flow: per-item
inputs:
  items: { type: array, required: true }
steps:
  - checks:
      for_each: "{{ items }}"
      concurrency: 3
      steps:
        - approve:
            ask: { title: "Approve {{ item }}?", outcomes: [yes, no] }
            timeout: "{{ 1h * (loop.index + 1) }}"
"""


async def test_each_branch_has_its_own_task(harness: Harness) -> None:
    run_id = await asked(harness, PER_ITEM, {"items": ["a", "b", "c"]})
    titles = sorted(t.request.title for t in harness.engine.tasks())
    assert titles == ["Approve a?", "Approve b?", "Approve c?"]
    harness.complete_task(run_id, "checks[1].approve", outcome="no")
    await harness.run_until_idle()
    bindings = harness.document(run_id)["bindings"]["checks"]
    assert [b["approve"]["status"] for b in bindings] == ["timeout", "completed", "timeout"]
    assert bindings[1]["approve"]["outcome"] == "no"
    states = {t.request.step: t.state for t in harness.engine.tasks(state=None)}
    assert states == {"checks[0].approve": TaskState.TIMEOUT,
                      "checks[1].approve": TaskState.COMPLETED,
                      "checks[2].approve": TaskState.TIMEOUT}


async def test_the_listing_is_of_open_tasks_and_may_be_narrowed_to_a_principal(
        harness: Harness) -> None:
    review = await asked(harness)
    anyone = await asked(harness, ANYONE, {})
    assert {t.run_id for t in harness.engine.tasks()} == {review, anyone}
    assert [t.run_id for t in harness.engine.tasks(principal="bob")] == [anyone]
    assert {t.run_id for t in harness.engine.tasks(principal="alice")} == {review, anyone}
    harness.complete_task(anyone, "ok", outcome="stop")
    assert [t.run_id for t in harness.engine.tasks()] == [review]
    assert [t.state for t in harness.engine.tasks(state=TaskState.COMPLETED)] == [
        TaskState.COMPLETED]


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=10)


@given(outcome=JSON, data=JSON)
def test_any_answer_is_judged_without_raising(outcome: Any, data: Any) -> None:
    task = TaskRequest(id="t", step="s", title="t", outcomes=("accept", "correct"),
                       created_at=START, until=START,
                       form={"type": "object", "properties": {"note": {"type": "string"}}})
    problems = completion_problems(task, outcome, data)
    assert all(isinstance(problem, str) for problem in problems)
    fits = (outcome in ("accept", "correct") and isinstance(data, dict)
            and isinstance(data.get("note", ""), str))
    assert (not problems) == fits

"""The dashboard's task inbox over a real socket, on each store, on a virtual clock (the
server has no worker: each test drives its runs): the open tasks, mine and all, with their
runs, deadlines and reminders; the completed ones; a task's form drawn from its schema; and
completing it through the form, with every refusal (422, 403, 409, CSRF) shown on the page."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from dashboard_support import Browser
from markupsafe import escape
from server_support import Served, serve
from task_support import START, TOKENS, ask, drive, write_tasks_project

from tarry.clock import VirtualClock
from tarry.model import RunStatus, TaskRecord, TaskState


@pytest.fixture
def clock() -> VirtualClock:
    """The server's clock, moved by the tests."""
    return VirtualClock(START)


@pytest.fixture
def dashboard(tmp_path: Path, store_url: str, clock: VirtualClock) -> Iterator[Served]:
    """The asking flows served with three principals' tokens, without a worker."""
    project = write_tasks_project(tmp_path / "project", store_url)
    with serve(project, TOKENS, worker=False, clock=clock) as served:
        yield served


@pytest.fixture
def review(dashboard: Served) -> TaskRecord:
    """The open review task (assigned to ops and alice)."""
    return ask(dashboard.engine, "review", request="R-7")


def _signed_in(served: Served, name: str) -> Browser:
    browser = Browser(served)
    assert browser.sign_in(f"{name}-token").status_code == 303
    return browser


@pytest.fixture
def alice(dashboard: Served) -> Iterator[Browser]:
    """A browser signed in as alice."""
    with _signed_in(dashboard, "alice") as browser:
        yield browser


def _text(page: str) -> str:
    """A page's text as it reads: without its tags, its whitespace folded."""
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    return re.sub(r"\(\s+", "(", re.sub(r"\s+([,.;:)])", r"\1", text))


def _rows(page: str, table: str) -> list[str]:
    """The task ids of a table of the inbox, in order."""
    found = re.search(rf'<table class="tasks" id="{table}">(.*?)</table>', page, re.DOTALL)
    return re.findall(r'<tr data-task="([0-9a-f]+)">', found.group(1)) if found else []


def _row(page: str, task_id: str) -> str:
    found = re.search(rf'<tr data-task="{task_id}">(.*?)</tr>', page, re.DOTALL)
    assert found, f"no row for task {task_id}"
    return _text(found.group(1))


def _problems(page: str) -> list[str]:
    found = re.search(r'<div class="notice error" role="alert" id="problems">(.*?)</div>',
                      page, re.DOTALL)
    assert found, "the page shows no problems"
    return [html.unescape(item) for item in re.findall(r"<li>(.*?)</li>", found.group(1))]


def _complete(browser: Browser, task_id: str, outcome: str, **fields: str) -> httpx.Response:
    return browser.submit(f"/tasks/{task_id}", f"/tasks/{task_id}/complete", outcome=outcome,
                          **{f"data.{name}": value for name, value in fields.items()})


def test_the_inbox_lists_the_open_tasks_with_their_runs_deadlines_and_reminders(
        dashboard: Served, alice: Browser, review: TaskRecord) -> None:
    page = alice.get("/tasks").text
    row = _row(page, review.id)
    assert row == ("Review the reply to R-7 The amount is missing.\nCheck the invoice. "
                   f"{review.run_id[:12]} review · step review ops, alice "
                   "2026-01-04 09:00:00 UTC in 3d 0 sent").replace("\n", " ")
    assert f'href="/tasks/{review.id}"' in page
    assert f'href="/runs/{review.run_id}"' in page


def test_the_reminders_sent_so_far_are_counted(dashboard: Served, clock: VirtualClock,
                                               alice: Browser, review: TaskRecord) -> None:
    clock.advance(timedelta(days=1))
    drive(dashboard.engine, review.run_id)
    assert "1 sent" in _row(alice.get("/tasks").text, review.id)
    assert _text(alice.get(f"/tasks/{review.id}").text).count("reminders 1 sent") == 1


def test_mine_is_what_the_principal_may_complete_and_all_is_every_open_task(
        dashboard: Served, clock: VirtualClock, alice: Browser, review: TaskRecord) -> None:
    clock.advance(1)
    triage = ask(dashboard.engine, "triage")
    clock.advance(1)
    count = ask(dashboard.engine, "count")
    newest_first = [count.id, triage.id, review.id]
    mine = alice.get("/tasks").text
    assert _rows(mine, "open-tasks") == [count.id, review.id]
    assert re.search(r'data-view="mine" class="on" aria-current="page">Mine <b>2</b>', mine)
    assert 'data-view="all">All <b>3</b>' in mine
    assert _rows(alice.get("/tasks?view=all").text, "open-tasks") == newest_first
    assert "ops" in _row(mine, review.id)
    assert "anyone" in _row(mine, count.id)
    with _signed_in(dashboard, "bob") as bob:
        assert _rows(bob.get("/tasks?view=mine").text, "open-tasks") == [count.id]


def test_mine_says_when_every_open_task_is_someone_elses(dashboard: Served) -> None:
    ask(dashboard.engine, "triage")
    with _signed_in(dashboard, "bob") as bob:
        page = _text(bob.get("/tasks").text)
    assert "Nothing for bob: 1 open task is assigned to others (all tasks)." in page


def test_an_unknown_view_is_refused_with_the_choices(alice: Browser) -> None:
    response = alice.get("/tasks?view=theirs")
    assert response.status_code == 400
    assert "There is no view 'theirs' of the tasks; choose one of: mine, all." in _text(
        response.text)


def test_the_task_page_draws_the_form_from_its_schema(alice: Browser,
                                                      review: TaskRecord) -> None:
    page = alice.get(f"/tasks/{review.id}").text
    assert re.findall(r'name="data\.(\w+)"', page) == ["note", "amount", "ratio", "urgent",
                                                       "channel", "tags"]
    assert '<select id="field-5" name="data.channel" required' not in page
    assert '<textarea id="field-6" name="data.tags" rows="2"' in page
    assert re.search(r'name="data\.note" value="" type="text" required', page)
    assert re.search(r'name="data\.amount" value="" type="number" step="1" min="1" required',
                     page)
    assert re.search(r'name="data\.ratio" value="" type="number" step="any">', page)
    assert re.search(r'type="checkbox" id="field-4" name="data\.urgent" value="true">', page)
    assert '<option value="&#34;email&#34;">email</option>' in page
    text = _text(page)
    assert "Note required What to tell the sender" in text
    assert "amount required The corrected amount in EUR" in text
    assert 'as JSON matching {"type": "array", "items": {"type": "string"}}' in text
    assert re.findall(r'<button type="submit" name="outcome" value="(\w+)" class="primary">',
                      page) == ["accept", "correct"]
    assert "Waiting for ops or alice to answer accept or correct by 2026-01-04 09:00:00 UTC" \
        in text


def test_completing_through_the_form_resumes_the_run_with_the_typed_data(
        dashboard: Served, alice: Browser, review: TaskRecord) -> None:
    response = _complete(alice, review.id, "correct", note="fix the amount", amount="120",
                         ratio="0.5", urgent="true", channel='"chat"', tags='["money"]')
    assert (response.status_code, response.headers["location"]) == (303,
                                                                     f"/tasks/{review.id}")
    data = {"note": "fix the amount", "amount": 120, "ratio": 0.5, "urgent": True,
            "channel": "chat", "tags": ["money"]}
    done = dashboard.engine.store.get_task(review.id)
    assert (done.state, done.completion and done.completion.by) == (TaskState.COMPLETED,
                                                                    "alice")
    assert drive(dashboard.engine, review.run_id).status is RunStatus.SUCCEEDED
    assert dashboard.engine.document(review.run_id)["bindings"]["review"]["data"] == data

    page = _text(alice.get(f"/tasks/{review.id}").text)
    assert "Completed as correct by alice at 2026-01-01 09:00:00 UTC." in page
    assert "Your answer" not in page
    inbox = alice.get("/tasks").text
    assert _rows(inbox, "open-tasks") == []
    assert _rows(inbox, "completed-tasks") == [review.id]
    assert _row(inbox, review.id).endswith("correct alice 2026-01-01 09:00:00 UTC now")


def test_fields_left_empty_are_left_out_and_an_unchecked_box_is_false(
        dashboard: Served, alice: Browser, review: TaskRecord) -> None:
    response = _complete(alice, review.id, "accept", note="fine", amount="3", ratio="",
                         channel="", tags="")
    assert response.status_code == 303
    completion = dashboard.engine.store.get_task(review.id).completion
    assert completion is not None
    assert completion.data == {"note": "fine", "amount": 3, "urgent": False}


@pytest.mark.parametrize(("answer", "problems"), [
    ({"outcome": "accept", "amount": "2"}, ["data: 'note' is a required property"]),
    ({"outcome": "accept", "note": "x", "amount": "0"},
     ["data: amount: 0 is less than the minimum of 1"]),
    ({"outcome": "accept", "note": "x", "amount": "two"},
     ["data: amount: 'two' is not of type 'integer'"]),
    ({"outcome": "accept", "note": "x", "amount": "1", "ratio": "half"},
     ["data: ratio: 'half' is not of type 'number'"]),
    ({"outcome": "accept", "note": "x", "amount": "1", "channel": '"fax"'},
     ["data: channel: 'fax' is not one of ['email', 'chat']"]),
    ({"outcome": "acept", "note": "x", "amount": "1"},
     ["outcome 'acept' is not one of the task's outcomes (accept, correct) (did you mean "
      "'accept'?)"]),
    ({"outcome": "accept", "note": "x", "amount": "1", "tags": '["a",'},
     ["data: tags: '[\"a\",' is not of type 'array'",
      "data: tags: not valid JSON: Expecting value (line 1, column 6)"]),
])
def test_an_answer_that_does_not_fit_is_shown_back_with_every_reason(
        dashboard: Served, alice: Browser, review: TaskRecord, answer: dict[str, str],
        problems: list[str]) -> None:
    response = _complete(alice, review.id, **answer)
    assert response.status_code == 422
    assert _problems(response.text) == problems
    assert f'data-live-url="/tasks/{review.id}"' in response.text  # polls the task, not the form
    for name, value in answer.items():
        if name not in {"outcome", "channel"}:  # a choice shows only its options
            assert str(escape(value)) in response.text, f"{name} was not shown back as typed"
    assert dashboard.engine.store.get_task(review.id).state is TaskState.OPEN
    refused = [entry.data for entry in dashboard.engine.store.history(review.run_id)
               if entry.kind == "task.refused"]
    assert [(entry["by"], entry["reason"]) for entry in refused] == [("alice", "invalid")]


def test_a_principal_not_assigned_is_told_so_and_refused(dashboard: Served,
                                                         review: TaskRecord) -> None:
    with _signed_in(dashboard, "bob") as bob:
        page = bob.get(f"/tasks/{review.id}").text
        assert ("This task is assigned to ops, alice; you are signed in as bob, so you may "
                "not complete it.") in _text(page)
        assert 'value="accept" class="primary" disabled>' in page
        response = _complete(bob, review.id, "accept", note="x", amount="1")
    assert response.status_code == 403
    assert (f"task '{review.id}' is assigned to ops, alice; 'bob' may not complete it"
            in _text(response.text))
    assert dashboard.engine.store.get_task(review.id).state is TaskState.OPEN


def test_a_task_already_completed_says_by_whom_and_changes_nothing(
        dashboard: Served, alice: Browser, review: TaskRecord) -> None:
    page = f"/tasks/{review.id}"
    token_page = alice.get(page).text
    dashboard.engine.complete_task(review.id, outcome="correct",
                                   data={"note": "done", "amount": 5}, by="ops")
    response = alice.http.post(f"{page}/complete", data={
        "csrf": re.findall(r'name="csrf" value="([^"]+)"', token_page)[0],
        "outcome": "accept", "data.note": "mine", "data.amount": "1"})
    assert response.status_code == 409
    text = _text(response.text)
    assert (f"task '{review.id}' was already completed by ops at 2026-01-01T09:00:00.000Z "
            "(correct); a task completes once") in text
    assert "Completed as correct by ops at 2026-01-01 09:00:00 UTC." in text
    completion = dashboard.engine.store.get_task(review.id).completion
    assert completion is not None
    assert (completion.by, completion.outcome) == ("ops", "correct")


def test_a_task_past_its_deadline_can_no_longer_be_completed(
        dashboard: Served, clock: VirtualClock, alice: Browser, review: TaskRecord) -> None:
    clock.advance(timedelta(days=3))
    page = alice.get(f"/tasks/{review.id}").text
    assert "Its deadline has passed: it can no longer be completed." in _text(page)
    response = _complete(alice, review.id, "accept", note="late", amount="1")
    assert response.status_code == 409
    assert (f"task '{review.id}' timed out at 2026-01-04T09:00:00.000Z; it can no longer be "
            "completed") in _text(response.text)


def test_a_form_without_the_sessions_token_is_refused(dashboard: Served, alice: Browser,
                                                      review: TaskRecord) -> None:
    response = alice.http.post(f"/tasks/{review.id}/complete",
                               data={"outcome": "accept", "data.note": "x",
                                     "data.amount": "1"})
    assert response.status_code == 403
    assert "It did not carry this session's security token" in _text(response.text)
    assert dashboard.engine.store.get_task(review.id).state is TaskState.OPEN


def test_a_task_without_a_form_asks_only_for_an_outcome(dashboard: Served) -> None:
    triage = ask(dashboard.engine, "triage")
    with _signed_in(dashboard, "ops") as ops:
        page = ops.get(f"/tasks/{triage.id}").text
        assert 'name="data' not in page
        response = ops.submit(f"/tasks/{triage.id}", f"/tasks/{triage.id}/complete",
                              outcome="stop")
    assert response.status_code == 303
    assert drive(dashboard.engine, triage.run_id).status is RunStatus.SUCCEEDED
    assert dashboard.engine.document(triage.run_id)["bindings"]["triage"]["outcome"] == "stop"


def test_a_form_that_fields_cannot_draw_is_typed_as_json(dashboard: Served,
                                                         alice: Browser) -> None:
    count = ask(dashboard.engine, "count")
    page = alice.get(f"/tasks/{count.id}").text
    assert '<textarea id="field-data" name="data"' in page
    assert "This form cannot be drawn as fields; type the data as JSON." in _text(page)
    assert "&#34;minProperties&#34;: 1" in page

    action = f"/tasks/{count.id}/complete"
    refused = alice.submit(f"/tasks/{count.id}", action, outcome="counted", data="[3")
    assert refused.status_code == 422
    assert _problems(refused.text) == [
        "data must be a JSON object, got str",
        "data: not valid JSON: Expecting ',' delimiter (line 1, column 3)"]
    assert ">[3</textarea>" in refused.text
    empty = alice.submit(f"/tasks/{count.id}", action, outcome="counted", data="{}")
    assert _problems(empty.text) == ["data: {} should be non-empty"]
    done = alice.submit(f"/tasks/{count.id}", action, outcome="counted",
                        data='{"crates": 4}')
    assert done.status_code == 303
    assert drive(dashboard.engine, count.run_id).status is RunStatus.SUCCEEDED
    assert dashboard.engine.document(count.run_id)["bindings"]["count"]["data"] == {
        "crates": 4}


def test_an_unknown_task_is_a_404_page(alice: Browser) -> None:
    response = alice.get("/tasks/nope")
    assert response.status_code == 404
    assert "no task with id &#39;nope&#39;" in response.text


def test_a_run_waiting_for_a_task_links_to_it(alice: Browser, review: TaskRecord) -> None:
    page = alice.get(f"/runs/{review.run_id}").text
    assert f'<a class="button" id="open-task" href="/tasks/{review.id}">Open the task</a>' \
        in page


def test_the_live_part_of_the_inbox_follows_a_completion(dashboard: Served, alice: Browser,
                                                         review: TaskRecord) -> None:
    live = {"X-Tarry-Live": "1"}
    assert _rows(alice.get("/tasks", headers=live).text, "open-tasks") == [review.id]
    dashboard.engine.complete_task(review.id, outcome="accept",
                                   data={"note": "ok", "amount": 1}, by="ops")
    fragment = alice.get("/tasks", headers=live).text
    assert "<html" not in fragment
    assert _rows(fragment, "completed-tasks") == [review.id]


def test_without_tokens_a_completion_is_made_as_anonymous(tmp_path: Path, store_url: str,
                                                         clock: VirtualClock) -> None:
    project = write_tasks_project(tmp_path / "open", store_url)
    with serve(project, worker=False, clock=clock) as served, Browser(served) as browser:
        count = ask(served.engine, "count")
        assert _rows(browser.get("/tasks").text, "open-tasks") == [count.id]
        response = browser.submit(f"/tasks/{count.id}", f"/tasks/{count.id}/complete",
                                  outcome="counted", data='{"crates": 2}')
        assert response.status_code == 303
        completion = served.engine.store.get_task(count.id).completion
    assert completion is not None
    assert completion.by == "anonymous"

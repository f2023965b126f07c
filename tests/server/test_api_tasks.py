"""``/v1/tasks`` over a real socket, on every store: the inbox (open, all, mine) and completion
as the bearer token's principal, with 403, 422, 409 and 404 in the one error shape, the run
resuming on the server's own worker, and every completion and refusal in the run's history."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_support import FLOWS, Served, serve, start, status_becomes, write_project

from tarry import ApiError, AsyncClient, Client

REVIEW_FLOW = """\
flow: review
steps:
  - review:
      ask:
        title: Review the reply
        details: The amount is missing.
        assign: [ops, alice]
        form:
          type: object
          required: [note]
          properties:
            note: { type: string }
        outcomes: [accept, correct]
      timeout: 3d
  - decided:
      exit: reviewed
"""

TOKENS = {"TARRY_API_TOKENS": "alice=alice-token,bob=bob-token,ops=ops-token"}


@pytest.fixture
def served(tmp_path: Path, store_url: str) -> Iterator[Served]:
    """A project with the review flow, served with three principals' tokens."""
    root = write_project(tmp_path / "project", store_url,
                         flows={**FLOWS, "review": REVIEW_FLOW})
    with serve(root, TOKENS) as server:
        yield server


def asked(client: httpx.Client) -> dict[str, Any]:
    """Start a review run and wait for its task; the task document."""
    run = start(client, "review")
    assert status_becomes(client, run["id"], "waiting")
    tasks = client.get("/v1/tasks").json()["tasks"]
    assert [task["run"] for task in tasks] == [run["id"]]
    task: dict[str, Any] = tasks[0]
    return task


def error_of(response: httpx.Response) -> tuple[int, str, str]:
    body = response.json()["error"]
    return response.status_code, body["type"], body["message"]


def test_the_inbox_lists_open_tasks_with_their_form(served: Served) -> None:
    with served.client("alice-token") as client:
        task = asked(client)
        assert {key: task[key] for key in ("step", "title", "details", "assign", "outcomes",
                                           "state", "reminders", "by")} == {
            "step": "review", "title": "Review the reply", "details": "The amount is missing.",
            "assign": ["ops", "alice"], "outcomes": ["accept", "correct"], "state": "open",
            "reminders": 0, "by": None}
        assert task["form"]["required"] == ["note"]
        assert [t["id"] for t in client.get("/v1/tasks?mine=true").json()["tasks"]] == [
            task["id"]]
    with served.client("bob-token") as client:
        assert client.get("/v1/tasks?mine=true").json()["tasks"] == []
        assert len(client.get("/v1/tasks").json()["tasks"]) == 1


def test_a_completion_as_an_assignee_resumes_the_run(served: Served) -> None:
    with served.client("alice-token") as client:
        task = asked(client)
        response = client.post(f"/v1/tasks/{task['id']}/complete",
                               json={"outcome": "accept", "data": {"note": "fine"}})
        assert response.status_code == 200, response.text
        assert (response.json()["state"], response.json()["by"]) == ("completed", "alice")
        assert status_becomes(client, task["run"], "succeeded")
        run = client.get(f"/v1/runs/{task['run']}").json()
        assert run["bindings"]["review"]["outcome"] == "accept"
        assert run["bindings"]["review"]["by"] == "alice"
        completed = [e["data"] for e in run["history"] if e["kind"] == "task.completed"]
        assert completed == [{"task": task["id"], "outcome": "accept", "by": "alice"}]
        assert client.get("/v1/tasks").json()["tasks"] == []
        assert [t["state"] for t in client.get("/v1/tasks?all=true").json()["tasks"]] == [
            "completed"]


def test_a_principal_not_assigned_is_403(served: Served) -> None:
    with served.client("alice-token") as alice, served.client("bob-token") as bob:
        task = asked(alice)
        response = bob.post(f"/v1/tasks/{task['id']}/complete",
                            json={"outcome": "accept", "data": {"note": "x"}})
        assert error_of(response) == (403, "forbidden", f"task '{task['id']}' is assigned to "
                                                        "ops, alice; 'bob' may not complete it")
        assert response.json()["error"]["details"] == {"principal": "bob", "task": task["id"],
                                                       "assign": ["ops", "alice"]}
        history = alice.get(f"/v1/runs/{task['run']}").json()["history"]
        assert [e["data"]["by"] for e in history if e["kind"] == "task.refused"] == ["bob"]


def test_an_answer_that_does_not_fit_is_422_with_every_reason(served: Served) -> None:
    with served.client("ops-token") as client:
        task = asked(client)
        response = client.post(f"/v1/tasks/{task['id']}/complete",
                               json={"outcome": "acept", "data": {"note": 5}})
        problems = ["outcome 'acept' is not one of the task's outcomes (accept, correct) "
                    "(did you mean 'accept'?)", "data: note: 5 is not of type 'string'"]
        assert error_of(response) == (422, "invalid", "; ".join(problems))
        assert response.json()["error"]["details"] == {"problems": problems}
        assert client.get("/v1/tasks").json()["tasks"][0]["state"] == "open"


def test_a_second_completion_is_409_and_changes_nothing(served: Served) -> None:
    with served.client("ops-token") as ops, served.client("alice-token") as alice:
        task = asked(ops)
        first = ops.post(f"/v1/tasks/{task['id']}/complete",
                         json={"outcome": "correct", "data": {"note": "a"}})
        second = alice.post(f"/v1/tasks/{task['id']}/complete",
                            json={"outcome": "accept", "data": {"note": "b"}})
        assert first.status_code == 200
        status, kind, message = error_of(second)
        assert (status, kind) == (409, "conflict")
        assert message.endswith("(correct); a task completes once")
        assert second.json()["error"]["details"] == {"kind": "task", "key": task["id"],
                                                     "state": "completed"}
        assert status_becomes(ops, task["run"], "succeeded")
        run = ops.get(f"/v1/runs/{task['run']}").json()
        assert run["bindings"]["review"]["outcome"] == "correct"


def test_an_unknown_task_is_404_and_a_malformed_body_422(served: Served) -> None:
    with served.client("ops-token") as client:
        missing = client.post("/v1/tasks/nope/complete", json={"outcome": "accept"})
        assert error_of(missing) == (404, "not_found", "no task with id 'nope'")
        malformed = client.post("/v1/tasks/nope/complete", json={"verdict": "accept"})
        assert malformed.status_code == 422


def test_the_tasks_need_a_token(served: Served) -> None:
    with served.client() as client:
        assert client.get("/v1/tasks").status_code == 401
        assert client.post("/v1/tasks/x/complete", json={"outcome": "a"}).status_code == 401


def test_the_openapi_document_describes_the_task_routes(served: Served) -> None:
    with served.client() as client:
        paths = client.get("/openapi.json").json()["paths"]
    assert set(paths["/v1/tasks"]) == {"get"}
    assert set(paths["/v1/tasks/{task_id}/complete"]) == {"post"}
    assert {"403", "404", "409", "422"} <= set(paths["/v1/tasks/{task_id}/complete"]["post"]
                                               ["responses"])


def test_the_client_lists_and_completes_tasks(served: Served) -> None:
    with Client(served.url, token="alice-token") as alice, \
            Client(served.url, token="bob-token") as bob:
        run = alice.start("review")
        with served.client("alice-token") as http:
            assert status_becomes(http, run["id"], "waiting")
        task = alice.tasks(mine=True)["tasks"][0]
        assert bob.tasks(mine=True)["tasks"] == []
        with pytest.raises(ApiError) as refused:
            bob.complete_task(task["id"], "accept", {"note": "x"})
        assert (refused.value.status, refused.value.type) == (403, "forbidden")
        with pytest.raises(ApiError) as invalid:
            alice.complete_task(task["id"], "accept")
        assert invalid.value.details == {"problems": ["data: 'note' is a required property"]}
        done = alice.complete_task(task["id"], "accept", {"note": "fine"})
        assert (done["state"], done["by"]) == ("completed", "alice")
        assert [t["state"] for t in alice.tasks(every=True)["tasks"]] == ["completed"]


async def test_the_async_client_lists_and_completes_tasks(served: Served) -> None:
    async with AsyncClient(served.url, token="ops-token") as ops:
        run = await ops.start("review")
        with served.client("ops-token") as http:
            assert status_becomes(http, run["id"], "waiting")
        task = (await ops.tasks())["tasks"][0]
        done = await ops.complete_task(task["id"], "correct", {"note": "fixed"})
        assert (done["outcome"], done["by"]) == ("correct", "ops")

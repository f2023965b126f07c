"""``/v1/runs`` and ``/v1/held`` over a real socket, on every store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from server_support import Served, start, status_becomes

from tarry.clock import iso


def _error(response: object) -> tuple[int, str, str]:
    body = response.json()["error"]  # type: ignore[attr-defined]
    return response.status_code, body["type"], body["message"]  # type: ignore[attr-defined]


def test_a_start_answers_201_with_the_run_document_and_the_worker_runs_it(served: Served) -> None:
    with served.client() as client:
        document = start(client, "quick", target="acme/web#7")
        assert (document["flow"], document["target"]) == ("quick", "acme/web#7")
        assert document["history"][0]["kind"] == "created"
        assert status_becomes(client, document["id"], "succeeded")


def test_a_retried_start_with_its_idempotency_key_returns_the_first_run(served: Served) -> None:
    body = {"flow": "approval", "inputs": {"deal": "d1"}}
    with served.client() as client:
        first = client.post("/v1/runs", json=body, headers={"Idempotency-Key": "order-1"})
        again = client.post("/v1/runs", json=body, headers={"Idempotency-Key": "order-1"})
        runs = client.get("/v1/runs").json()["runs"]
    assert (first.status_code, again.status_code) == (201, 201)
    assert (first.headers["Idempotent-Replayed"], again.headers["Idempotent-Replayed"]) == (
        "false", "true")
    assert again.json()["id"] == first.json()["id"]
    assert [run["id"] for run in runs] == [first.json()["id"]]


def test_an_idempotency_key_reused_for_another_start_is_a_409(served: Served) -> None:
    with served.client() as client:
        first = client.post("/v1/runs", json={"flow": "nap"}, headers={"Idempotency-Key": "k"})
        other = client.post("/v1/runs", json={"flow": "quick"}, headers={"Idempotency-Key": "k"})
    assert _error(other) == (409, "conflict", "the Idempotency-Key 'k' was first used with a "
                                              "different request; use a new key for a new start")
    assert other.json()["error"]["details"] == {"idempotency_key": "k",
                                                "run_id": first.json()["id"]}


def test_a_malformed_idempotency_key_is_a_400(served: Served) -> None:
    with served.client() as client:
        response = client.post("/v1/runs", json={"flow": "nap"},
                               headers={"Idempotency-Key": "has space"})
    assert _error(response) == (400, "malformed", "the Idempotency-Key header must be 1–255 "
                                                  "printable ASCII characters without spaces")


@pytest.mark.parametrize(("body", "expected"), [
    ({"flow": "nope"}, (404, "not_found", "no flow named 'nope' among the project's flows")),
    ({"flow": "approval"}, (422, "invalid", "input 'deal' is required")),
    ({"flow": "nap", "colour": "red"}, (422, "invalid", "the request is invalid: body.colour: "
                                                        "Extra inputs are not permitted")),
    ({"flow": "nap", "hold_after": "2026-09-01T09:00:00"},
     (422, "invalid", "the request is invalid: body.hold_after: Input should have timezone info")),
])
def test_a_start_that_cannot_be_honoured_is_refused_with_the_reason(
        served: Served, body: dict[str, object], expected: tuple[int, str, str]) -> None:
    with served.client() as client:
        response = client.post("/v1/runs", json=body)
    status, kind, message = expected
    assert _error(response) == (status, kind, message.format(
        flows=served.settings.flows_dir))


def test_a_body_that_is_not_json_is_a_400(served: Served) -> None:
    with served.client() as client:
        response = client.post("/v1/runs", content=b"{nope",
                               headers={"Content-Type": "application/json"})
    assert _error(response) == (400, "malformed", "the request body is not valid JSON")


def test_runs_are_listed_newest_first_in_pages_that_meet_exactly(served: Served) -> None:
    with served.client() as client:
        ids = [start(client, "nap")["id"] for _ in range(5)]
        seen: list[str] = []
        cursor = None
        while True:
            page = client.get("/v1/runs", params={"limit": 2, **(
                {"cursor": cursor} if cursor else {})}).json()
            seen += [run["id"] for run in page["runs"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
    assert seen == ids[::-1]


def test_a_listed_run_shows_the_bindings_of_its_completed_steps(served: Served) -> None:
    with served.client() as client:
        run = start(client, "quick")
        assert status_becomes(client, run["id"], "succeeded")
        listed = client.get("/v1/runs", params={"flow": "quick"}).json()["runs"]
    assert [each["bindings"] for each in listed] == [{"hello": {"text": "hi"}}]


def test_runs_are_filtered_by_status_flow_target_and_what_they_wait_for(served: Served) -> None:
    with served.client() as client:
        napping = start(client, "nap", target="t-1")["id"]
        approving = start(client, "approval", inputs={"deal": "d1"})["id"]
        assert status_becomes(client, napping, "waiting")
        assert status_becomes(client, approving, "waiting")

        def ids(**params: str) -> list[str]:
            return [run["id"] for run in client.get("/v1/runs", params=params).json()["runs"]]

        assert ids(waiting_for="timer") == [napping]
        assert ids(waiting_for="event") == [approving]
        assert ids(waiting_for="deal.approved") == [approving]
        assert ids(target="t-1") == [napping]
        assert ids(flow="approval", status="waiting") == [approving]
        assert ids(status="succeeded") == []


@pytest.mark.parametrize("params", [{"cursor": "bm9wZQ"}, {"cursor": "!!"}])
def test_a_cursor_the_server_did_not_give_out_is_a_400(served: Served,
                                                        params: dict[str, str]) -> None:
    with served.client() as client:
        response = client.get("/v1/runs", params=params)
    assert _error(response) == (400, "malformed", "the cursor is not one this server gave "
                                                  "out; pass a page's next_cursor as it came")


def test_an_unknown_status_filter_is_a_422(served: Served) -> None:
    with served.client() as client:
        response = client.get("/v1/runs", params={"status": "sleeping"})
    assert response.status_code == 422
    assert response.json()["error"]["details"]["errors"][0]["where"] == "query.status"


@pytest.mark.parametrize(("value", "suggestion"), [
    ("no.such", ""), ("deal.aproved", " (did you mean 'deal.approved'?)"),
    ("timr", " (did you mean 'timer'?)")])
def test_a_waiting_for_filter_that_names_nothing_is_a_422(served: Served, value: str,
                                                          suggestion: str) -> None:
    with served.client() as client:
        response = client.get("/v1/runs", params={"waiting_for": value})
    assert _error(response) == (
        422, "invalid", f"waiting_for '{value}' is neither a kind of wait (child, event, hold, "
                        f"poll, retry, slot, task, throttle, timer, window) nor a declared event "
                        f"type{suggestion}")
    assert response.json()["error"]["details"] == {"problems": [response.json()["error"][
        "message"]]}


def test_an_unknown_run_is_a_404(served: Served) -> None:
    with served.client() as client:
        response = client.get("/v1/runs/nope")
    assert _error(response) == (404, "not_found", "no run with id 'nope'")
    assert response.json()["error"]["details"] == {"kind": "run", "key": "nope"}


def test_cancel_ends_a_waiting_run_and_a_second_cancel_is_a_409(served: Served) -> None:
    with served.client() as client:
        run_id = start(client, "nap")["id"]
        assert status_becomes(client, run_id, "waiting")
        cancelled = client.post(f"/v1/runs/{run_id}/cancel")
        again = client.post(f"/v1/runs/{run_id}/cancel")
    assert (cancelled.status_code, cancelled.json()["status"]) == (200, "cancelled")
    assert cancelled.json()["history"][-1]["data"] == {"by": "anonymous"}
    assert _error(again) == (409, "conflict", f"run {run_id} already cancelled")


def test_cancel_of_an_unknown_run_is_a_404(served: Served) -> None:
    with served.client() as client:
        assert client.post("/v1/runs/nope/cancel").status_code == 404


def test_held_lists_the_runs_held_before_their_first_step(served: Served) -> None:
    with served.client() as client:
        tomorrow = iso(datetime.now(UTC) + timedelta(days=1))
        held = start(client, "nap", hold_after=tomorrow)
        start(client, "nap")
        listed = client.get("/v1/held").json()
    assert held["status"] == "held"
    assert [run["id"] for run in listed["runs"]] == [held["id"]]
    assert listed["next_cursor"] is None

"""``/v1/events`` over a real socket, on every store: send, dedup, quarantine, the inbox."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from server_support import Served, start, status_becomes


def _error(response: httpx.Response) -> tuple[int, str, str]:
    body = response.json()["error"]
    return response.status_code, body["type"], body["message"]


def _send(client: httpx.Client, data: dict[str, Any], **extra: Any) -> httpx.Response:
    return client.post("/v1/events/deal.approved", json={"data": data, **extra})


def test_an_event_is_accepted_202_delivered_and_its_run_resumes(served: Served) -> None:
    with served.client() as client:
        run_id = start(client, "approval", inputs={"deal": "d1"})["id"]
        assert status_becomes(client, run_id, "waiting")
        response = _send(client, {"deal": "d1", "approved": True}, id="e1")
        assert response.status_code == 202
        assert (response.json()["state"], response.json()["runs"]) == ("delivered", [run_id])
        assert status_becomes(client, run_id, "succeeded")
        bindings = client.get(f"/v1/runs/{run_id}").json()["bindings"]
    assert bindings["approval"]["event"] == {"deal": "d1", "approved": True}


def test_an_event_no_run_waits_for_is_buffered(served: Served) -> None:
    with served.client() as client:
        response = _send(client, {"deal": "early", "approved": True})
    assert (response.status_code, response.json()["state"]) == (202, "buffered")


@pytest.mark.parametrize("dedup", [{"id": "same"}, {"header": "same"}])
def test_the_same_id_twice_is_a_duplicate_acknowledged_202(served: Served,
                                                            dedup: dict[str, str]) -> None:
    headers = {"Idempotency-Key": dedup["header"]} if "header" in dedup else {}
    body = {"data": {"deal": "d", "approved": True}, **({"id": dedup["id"]}
                                                        if "id" in dedup else {})}
    with served.client() as client:
        first = client.post("/v1/events/deal.approved", json=body, headers=headers)
        again = client.post("/v1/events/deal.approved", json=body, headers=headers)
    assert (first.json()["state"], again.status_code, again.json()["state"]) == (
        "buffered", 202, "duplicate")
    assert again.json()["id"] == first.json()["id"] == "same"


def test_an_invalid_payload_is_quarantined_and_answered_422_with_the_reasons(
        served: Served) -> None:
    with served.client() as client:
        response = _send(client, {"deal": "d1"}, id="bad-1")
        stored = client.get("/v1/events/bad-1").json()
    assert _error(response) == (422, "invalid", "the event is invalid and was quarantined "
                                                "(id bad-1): 'approved' is a required property")
    assert response.json()["error"]["details"]["errors"] == ["'approved' is a required property"]
    assert stored["state"] == "invalid"


def test_an_unknown_event_type_is_a_404_with_a_suggestion(served: Served) -> None:
    with served.client() as client:
        response = client.post("/v1/events/deal.aproved", json={"data": {}})
    assert _error(response) == (404, "not_found", "unknown event type 'deal.aproved' (did you "
                                                  "mean 'deal.approved'?); declare it in "
                                                  "events.yaml")


@pytest.mark.parametrize(("body", "expected"), [
    (b"{nope", (400, "malformed", "the request body is not valid JSON")),
    (b'{"data": []}', (422, "invalid", "the request is invalid: body.data: Input should be an "
                                       "object")),
    (b'{"data": {}, "type": "x"}', (422, "invalid", "the request is invalid: body.type: Extra "
                                                    "inputs are not permitted")),
])
def test_a_malformed_send_is_refused_before_anything_is_stored(
        served: Served, body: bytes, expected: tuple[int, str, str]) -> None:
    with served.client() as client:
        response = client.post("/v1/events/deal.approved", content=body,
                               headers={"Content-Type": "application/json"})
        assert _error(response) == expected
        assert client.get("/v1/events").json()["events"] == []


def test_the_inbox_lists_newest_first_filtered_and_in_pages(served: Served) -> None:
    with served.client() as client:
        for number in range(3):
            _send(client, {"deal": f"d{number}", "approved": True}, id=f"ok-{number}")
        _send(client, {"deal": "x"}, id="bad")
        invalid = client.get("/v1/events", params={"state": "invalid"}).json()["events"]
        first = client.get("/v1/events", params={"limit": 3}).json()
        rest = client.get("/v1/events", params={"limit": 3,
                                                "cursor": first["next_cursor"]}).json()
    assert [event["id"] for event in invalid] == ["bad"]
    assert [e["id"] for e in first["events"] + rest["events"]] == ["bad", "ok-2", "ok-1", "ok-0"]
    assert rest["next_cursor"] is None


def test_a_quarantined_event_is_redelivered_corrected_and_reaches_its_run(
        served: Served) -> None:
    with served.client() as client:
        run_id = start(client, "approval", inputs={"deal": "d1"})["id"]
        assert status_becomes(client, run_id, "waiting")
        _send(client, {"deal": "d1"}, id="fix-me")
        response = client.post("/v1/events/fix-me/redeliver",
                               json={"data": {"deal": "d1", "approved": False}})
        again = client.post("/v1/events/fix-me/redeliver")
        assert (response.status_code, response.json()["state"]) == (200, "delivered")
        assert status_becomes(client, run_id, "succeeded")
    assert _error(again) == (409, "conflict", "event 'fix-me' is delivered; only invalid, "
                                              "unmatched or buffered events can be redelivered")


def test_a_redelivery_still_invalid_stays_quarantined_with_a_422(served: Served) -> None:
    with served.client() as client:
        _send(client, {"deal": "d1"}, id="still-bad")
        response = client.post("/v1/events/still-bad/redeliver",
                               json={"data": {"deal": 5, "approved": True}})
    assert _error(response)[:2] == (422, "invalid")
    assert response.json()["error"]["details"]["event"]["state"] == "invalid"


def test_discard_sets_an_event_aside_and_a_second_discard_is_a_409(served: Served) -> None:
    with served.client() as client:
        _send(client, {"deal": "x"}, id="junk")
        discarded = client.post("/v1/events/junk/discard")
        again = client.post("/v1/events/junk/discard")
    assert (discarded.status_code, discarded.json()["state"]) == (200, "discarded")
    assert _error(again)[:2] == (409, "conflict")


@pytest.mark.parametrize("path", ["/v1/events/nope", "/v1/events/nope/redeliver",
                                  "/v1/events/nope/discard"])
def test_an_unknown_event_id_is_a_404(served: Served, path: str) -> None:
    with served.client() as client:
        response = client.get(path) if path.endswith("nope") else client.post(path)
    assert _error(response) == (404, "not_found", "no event with id 'nope'")

"""Each security rule of SPEC 8.2 over a real socket: bearer tokens, principals, webhook
signatures of every scheme, the body limit, and refusals at start."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from server_support import EVENTS, Served, serve, start, status_becomes, write_project

from tarry.errors import ConfigError
from tarry.holds.doctor import Level, diagnose
from tarry.server.signatures import sign

TOKENS = {"TARRY_API_TOKEN": "single-secret", "TARRY_API_TOKENS": "ops=ops-secret,bob=bob-secret"}

SIGNED_EVENTS = EVENTS + "".join(f"""
  {scheme}.hook:
    correlate_on: [deal]
    secret_env: {scheme.upper()}_SECRET
    signature: {scheme}
""" for scheme in ("tarry", "github", "slack"))
SECRETS = {f"{scheme.upper()}_SECRET": f"{scheme}-shared" for scheme in ("tarry", "github",
                                                                          "slack")}


@pytest.fixture
def guarded(project: Path) -> Iterator[Served]:
    """The project served with a single token and two named principals."""
    with serve(project, TOKENS) as server:
        yield server


@pytest.fixture
def signing(tmp_path: Path, store_url: str) -> Iterator[Served]:
    """A project with one signed event type per scheme, served with a token."""
    root = write_project(tmp_path / "signed", store_url, events=SIGNED_EVENTS)
    with serve(root, {**TOKENS, **SECRETS}) as server:
        yield server


def _error(response: httpx.Response) -> tuple[int, str, str]:
    body = response.json()["error"]
    return response.status_code, body["type"], body["message"]


# -- bearer tokens ----------------------------------------------------------------------------

def test_without_a_token_every_v1_call_is_a_401(guarded: Served) -> None:
    with guarded.client() as client:
        response = client.get("/v1/runs")
    assert _error(response) == (401, "unauthorized", "this endpoint needs 'Authorization: "
                                                     "Bearer <token>'; none was sent")
    assert response.headers["WWW-Authenticate"] == 'Bearer realm="tarry"'


@pytest.mark.parametrize("header", ["Bearer wrong", "Bearer single-secretX", "Basic abc",
                                    "single-secret"])
def test_a_wrong_token_is_a_401(guarded: Served, header: str) -> None:
    with guarded.client() as client:
        response = client.get("/v1/runs", headers={"Authorization": header})
    assert _error(response) == (401, "unauthorized", "this endpoint needs 'Authorization: "
                                                     "Bearer <token>' with a valid token")


@pytest.mark.parametrize(("token", "principal"), [("single-secret", "api"),
                                                  ("ops-secret", "ops"),
                                                  ("bob-secret", "bob")])
def test_each_token_acts_as_its_principal(guarded: Served, token: str, principal: str) -> None:
    with guarded.client(token) as client:
        run_id = start(client, "nap")["id"]
        assert status_becomes(client, run_id, "waiting")
        cancelled = client.post(f"/v1/runs/{run_id}/cancel").json()
    assert cancelled["history"][-1]["data"] == {"by": principal}


def test_health_and_metrics_need_no_token(guarded: Served) -> None:
    with guarded.client() as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/metrics").status_code == 200


def test_a_principal_named_like_the_single_token_is_refused_at_start(project: Path) -> None:
    with pytest.raises(ConfigError) as caught, serve(project, {"TARRY_API_TOKEN": "a",
                                                               "TARRY_API_TOKENS": "api=b"}):
        pass
    assert str(caught.value) == ("TARRY_API_TOKENS: the principal 'api' is TARRY_API_TOKEN's; "
                                 "name that principal differently")


# -- webhook signatures -----------------------------------------------------------------------

def _signed(scheme: str, body: bytes, *, secret: str | None = None,
            at: datetime | None = None) -> dict[str, str]:
    key = (secret or f"{scheme}-shared").encode()
    return sign(scheme, key, body, at or datetime.now(UTC))


@pytest.mark.parametrize("scheme", ["tarry", "github", "slack"])
def test_a_signed_delivery_needs_no_bearer_token(signing: Served, scheme: str) -> None:
    body = json.dumps({"deal": "d1"}).encode()
    with signing.client() as client:
        response = client.post(f"/v1/events/{scheme}.hook", content=body,
                               headers={"Content-Type": "application/json",
                                        **_signed(scheme, body)})
    assert (response.status_code, response.json()["data"]) == (202, {"deal": "d1"})


@pytest.mark.parametrize(("scheme", "header"), [("tarry", "X-Tarry-Signature"),
                                                ("github", "X-Hub-Signature-256"),
                                                ("slack", "X-Slack-Signature")])
def test_an_unsigned_delivery_is_a_401_even_with_a_bearer_token(signing: Served, scheme: str,
                                                                header: str) -> None:
    with signing.client("single-secret") as client:
        response = client.post(f"/v1/events/{scheme}.hook", json={"deal": "d1"},
                               headers={"X-Slack-Request-Timestamp":
                                        str(int(datetime.now(UTC).timestamp()))})
    assert _error(response) == (401, "unauthorized", "this event type accepts only signed "
                                                     f"deliveries: the {header} header is "
                                                     "missing")


@pytest.mark.parametrize(("scheme", "header"), [("tarry", "X-Tarry-Signature"),
                                                ("github", "X-Hub-Signature-256"),
                                                ("slack", "X-Slack-Signature")])
def test_a_delivery_signed_with_another_secret_is_a_401(signing: Served, scheme: str,
                                                        header: str) -> None:
    body = json.dumps({"deal": "d1"}).encode()
    with signing.client() as client:
        response = client.post(f"/v1/events/{scheme}.hook", content=body,
                               headers=_signed(scheme, body, secret="guess"))
        assert client.get("/v1/events", headers={"Authorization": "Bearer ops-secret"}
                          ).json()["events"] == []
    assert _error(response) == (401, "unauthorized", f"the {header} signature does not match "
                                                     "the body signed with this event type's "
                                                     "secret")


def test_a_tampered_body_does_not_match_its_signature(signing: Served) -> None:
    headers = _signed("github", b'{"deal": "d1"}')
    with signing.client() as client:
        response = client.post("/v1/events/github.hook", content=b'{"deal": "d2"}',
                               headers=headers)
    assert response.status_code == 401


def test_a_slack_request_older_than_five_minutes_is_a_401(signing: Served) -> None:
    body = b'{"deal": "d1"}'
    stale = datetime.now(UTC) - timedelta(minutes=6)
    with signing.client() as client:
        response = client.post("/v1/events/slack.hook", content=body,
                               headers=_signed("slack", body, at=stale))
    assert _error(response) == (401, "unauthorized", "the X-Slack-Request-Timestamp is more "
                                                     "than 5 minutes from now: a stale or "
                                                     "replayed request")


def test_a_slack_form_payload_is_read_as_its_json(signing: Served) -> None:
    body = urlencode({"payload": json.dumps({"deal": "d9", "actions": [{"value": "ok"}]})})
    with signing.client() as client:
        response = client.post("/v1/events/slack.hook", content=body.encode(),
                               headers={"Content-Type": "application/x-www-form-urlencoded",
                                        **_signed("slack", body.encode())})
    assert (response.status_code, response.json()["data"]["deal"]) == (202, "d9")


@pytest.mark.parametrize("scheme", ["tarry", "github"])
def test_a_form_without_payload_is_a_400_but_for_slack(signing: Served, scheme: str) -> None:
    body = urlencode({"deal": "d9"}).encode()
    with signing.client() as client:
        response = client.post(f"/v1/events/{scheme}.hook", content=body,
                               headers={"Content-Type": "application/x-www-form-urlencoded",
                                        **_signed(scheme, body)})
    assert (response.status_code, response.json()["error"]["message"]) == (
        400, "a form-encoded event needs a 'payload' field holding its JSON")


def test_a_github_delivery_id_dedups_a_redelivered_webhook(signing: Served) -> None:
    body = b'{"deal": "d1"}'
    headers = {**_signed("github", body), "X-GitHub-Delivery": "72d3162e"}
    with signing.client() as client:
        first = client.post("/v1/events/github.hook", content=body, headers=headers)
        again = client.post("/v1/events/github.hook", content=body, headers=headers)
    assert (first.json()["id"], again.json()["state"]) == ("72d3162e", "duplicate")


def _recorded_events(served: Served) -> list[str]:
    return [record.id for record in served.engine.store.list_events(
        now=served.engine.clock.now())]


def test_a_signed_github_ping_is_answered_and_records_no_event(signing: Served) -> None:
    body = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 42}).encode()
    with signing.client() as client:
        response = client.post("/v1/events/github.hook", content=body,
                               headers={**_signed("github", body), "X-GitHub-Event": "ping",
                                        "X-GitHub-Delivery": "ping-1"})
    assert (response.status_code, response.json()) == (200, {"handshake": "ping",
                                                             "hook_id": 42})
    assert _recorded_events(signing) == []


def test_an_unsigned_github_ping_is_a_401(signing: Served) -> None:
    with signing.client() as client:
        response = client.post("/v1/events/github.hook", content=b'{"hook_id": 42}',
                               headers={"X-GitHub-Event": "ping"})
    assert response.status_code == 401


def test_slack_url_verification_echoes_the_challenge_and_records_no_event(
        signing: Served) -> None:
    body = json.dumps({"type": "url_verification", "token": "legacy",
                       "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"})
    with signing.client() as client:
        response = client.post("/v1/events/slack.hook", content=body.encode(),
                               headers={"Content-Type": "application/json",
                                        **_signed("slack", body.encode())})
    assert (response.status_code, response.json()) == (200, {
        "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"})
    assert _recorded_events(signing) == []


def test_slack_url_verification_without_a_challenge_is_a_400(signing: Served) -> None:
    body = b'{"type": "url_verification"}'
    with signing.client() as client:
        response = client.post("/v1/events/slack.hook", content=body,
                               headers={"Content-Type": "application/json",
                                        **_signed("slack", body)})
    assert _error(response) == (400, "malformed", "a Slack url_verification request needs "
                                                  "a 'challenge' string")


def test_a_signed_type_whose_secret_is_unset_refuses_to_start(tmp_path: Path,
                                                              store_url: str) -> None:
    root = write_project(tmp_path / "unset", store_url, events=SIGNED_EVENTS)
    with pytest.raises(ConfigError) as caught, serve(root, {**SECRETS, "GITHUB_SECRET": ""}):
        pass
    assert str(caught.value) == ("event type 'github.hook' declares secret_env GITHUB_SECRET, "
                                 "but GITHUB_SECRET is not set: its senders' signatures could "
                                 "not be checked")


NOW = datetime(2026, 12, 1, tzinfo=UTC)


def test_doctor_reports_as_an_error_the_unset_secret_that_stops_serve(
        tmp_path: Path, store_url: str) -> None:
    root = write_project(tmp_path / "unset", store_url, events=SIGNED_EVENTS)
    environ = {**SECRETS, "GITHUB_SECRET": ""}
    with pytest.raises(ConfigError) as refused, serve(root, environ):
        pass
    findings = diagnose(NOW, cwd=root, env=environ)
    assert [(f.level, f.message) for f in findings if f.topic == "webhook"] == [
        (Level.ERROR, f"{refused.value}; `tarry serve` refuses to start until it is set")]

    findings = diagnose(NOW, cwd=root, env=SECRETS)
    assert [(f.level, f.message) for f in findings if f.topic == "webhook"] == [
        (Level.OK, "the secrets of 3 signed event type(s) are set")]
    with serve(root, SECRETS) as server:
        assert httpx.get(f"{server.url}/healthz").status_code == 200


# -- the body limit ---------------------------------------------------------------------------

@pytest.fixture
def small_limit(tmp_path: Path, store_url: str) -> Iterator[Served]:
    """The project with ``[limits] request_bytes = 64``."""
    root = write_project(tmp_path / "small", store_url, limits="request_bytes = 64")
    with serve(root) as server:
        yield server


def test_a_body_over_the_limit_is_a_413_before_it_is_read(small_limit: Served) -> None:
    with small_limit.client() as client:
        response = client.post("/v1/events/deal.approved",
                               json={"data": {"deal": "x" * 100, "approved": True}})
        assert client.get("/v1/events").json()["events"] == []
    assert _error(response) == (413, "too_large", "the request body is larger than the limit "
                                                  "of 64 bytes ([limits] request_bytes)")


def test_a_chunked_body_is_cut_off_at_the_limit(small_limit: Served) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"data": {"deal": "'
        for _ in range(100):
            yield b"x" * 10
        yield b'", "approved": true}}'

    with small_limit.client() as client:
        response = client.post("/v1/events/deal.approved", content=chunks(),
                               headers={"Content-Type": "application/json"})
    assert _error(response)[:2] == (413, "too_large")


def test_no_token_is_ever_in_the_log(guarded: Served, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("DEBUG"), guarded.client("bob-secret") as client:
        start(client, "quick")
        client.get("/v1/runs", headers={"Authorization": "Bearer wrong-guess"})
    text = caplog.text
    assert all(secret not in text for secret in ("single-secret", "ops-secret", "bob-secret",
                                                 "wrong-guess"))



@pytest.mark.parametrize("body", [
    b'{"deal": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"deal": NaN}',
    b'{"deal": ' + b"9" * 5000 + b"}",
], ids=["deep", "NaN", "long number"])
def test_a_signed_delivery_of_hostile_json_is_a_400_not_a_crash(
        signing: Served, body: bytes) -> None:
    with signing.client() as client:
        response = client.post("/v1/events/tarry.hook", content=body,
                               headers=_signed("tarry", body))
        assert _error(response) == (400, "malformed", "the request body is not valid JSON")
        listed = client.get("/v1/events", headers={"Authorization": "Bearer single-secret"})
        assert listed.json()["events"] == []

"""Operators can see what the server did, over a real socket: one log line per request
(method, path, status, duration, principal; never a token, a query string or a body), and
each refused webhook logged with its reason and counted in ``/metrics``."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from server_support import EVENTS, Served, eventually, serve, start, write_project

from markdown_blocks import Document
from tarry.server.api.events import WEBHOOK_LOGGER
from tarry.server.logs import JsonFormatter
from tarry.server.requestlog import REQUEST_LOGGER
from tarry.server.signatures import sign

GUIDE = Document("docs/operating.md", __file__)
LOG_LINE = GUIDE.block("json", after="## What the server logs")

TOKENS = {"TARRY_API_TOKEN": "single-secret", "TARRY_API_TOKENS": "bob=bob-secret"}
SIGNED_EVENTS = EVENTS + """
  github.hook:
    correlate_on: [deal]
    secret_env: GITHUB_SECRET
    signature: github
  slack.hook:
    correlate_on: [deal]
    secret_env: SLACK_SECRET
    signature: slack
"""
SECRETS = {"GITHUB_SECRET": "github-shared", "SLACK_SECRET": "slack-shared"}


@pytest.fixture
def guarded(project: Path) -> Iterator[Served]:
    with serve(project, TOKENS) as server:
        yield server


@pytest.fixture
def signing(tmp_path: Path, store_url: str) -> Iterator[Served]:
    root = write_project(tmp_path / "signed", store_url, events=SIGNED_EVENTS)
    with serve(root, {**TOKENS, **SECRETS}) as server:
        yield server


def _fields(caplog: pytest.LogCaptureFixture, name: str) -> list[dict[str, Any]]:
    return [record.__dict__["fields"] for record in caplog.records if record.name == name]


def test_each_request_is_one_line_with_method_path_status_duration_and_principal(
        guarded: Served, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, REQUEST_LOGGER), guarded.client("bob-secret") as client:
        start(client, "quick", target="body-text-42")
        client.get("/v1/runs?status=waiting&flow=secret-query")
        client.get("/v1/runs", headers={"Authorization": "Bearer wrong-guess"})
        # the line is written once the response is sent: the client may have it first
        assert eventually(lambda: len(_fields(caplog, REQUEST_LOGGER)) == 3)
    lines = _fields(caplog, REQUEST_LOGGER)
    assert [(f["method"], f["path"], f["status"], f["principal"]) for f in lines] == [
        ("POST", "/v1/runs", 201, "bob"), ("GET", "/v1/runs", 200, "bob"),
        ("GET", "/v1/runs", 401, None)]
    assert all(isinstance(f["duration_ms"], float) and f["duration_ms"] >= 0 for f in lines)
    logged = caplog.text + json.dumps(lines)
    for never in ("bob-secret", "wrong-guess", "body-text-42", "secret-query"):
        assert never not in logged


def test_a_json_log_line_carries_the_fields_as_keys() -> None:
    record = logging.LogRecord(REQUEST_LOGGER, logging.INFO, __file__, 1, "GET /healthz 200",
                               None, None)
    record.fields = {"method": "GET", "path": "/healthz", "status": 200, "duration_ms": 0.5,
                     "principal": None}
    line = json.loads(JsonFormatter().format(record))
    assert {key: line[key] for key in ("logger", "method", "path", "status", "duration_ms",
                                       "principal")} == {
        "logger": REQUEST_LOGGER, "method": "GET", "path": "/healthz", "status": 200,
        "duration_ms": 0.5, "principal": None}


def test_the_guides_log_line_is_what_a_request_line_looks_like() -> None:
    shown = json.loads(LOG_LINE)
    record = logging.LogRecord(REQUEST_LOGGER, logging.INFO, __file__, 1, shown["message"],
                               None, None)
    record.fields = {key: shown[key] for key in ("method", "path", "status", "duration_ms",
                                                 "principal")}
    line = json.loads(JsonFormatter().format(record))
    assert line.keys() == shown.keys()
    assert {k: v for k, v in line.items() if k != "ts"} == {
        k: v for k, v in shown.items() if k != "ts"}


def _refused(served: Served) -> dict[str, float]:
    with served.client() as client:
        text = client.get("/metrics").text
    return {reason: float(value) for reason, value in
            re.findall(r'^tarry_webhooks_refused_total\{reason="([a-z-]+)"\} (\S+)$', text,
                       re.MULTILINE)}


def test_each_refused_webhook_is_logged_with_its_reason_and_counted(
        signing: Served, caplog: pytest.LogCaptureFixture) -> None:
    body = b'{"deal": "d1"}'
    now = datetime.now(UTC)
    deliveries = [
        ("github.hook", {}),
        ("github.hook", sign("github", b"guess", body, now)),
        ("github.hook", sign("github", b"guess", body, now)),
        ("slack.hook", sign("slack", b"slack-shared", body, now - timedelta(minutes=6))),
        ("slack.hook", {"X-Slack-Signature": "v0=00", "X-Slack-Request-Timestamp": "soon"}),
    ]
    with caplog.at_level(logging.INFO), signing.client() as client:
        statuses = [client.post(f"/v1/events/{event_type}", content=body, headers=headers
                                ).status_code for event_type, headers in deliveries]
        assert eventually(lambda: len(_fields(caplog, REQUEST_LOGGER)) == 5)
    assert statuses == [401] * 5
    assert [(f["event_type"], f["reason"]) for f in _fields(caplog, WEBHOOK_LOGGER)] == [
        ("github.hook", "missing-signature"), ("github.hook", "bad-signature"),
        ("github.hook", "bad-signature"), ("slack.hook", "stale-timestamp"),
        ("slack.hook", "bad-timestamp")]
    warnings = [r.getMessage() for r in caplog.records if r.name == WEBHOOK_LOGGER]
    assert warnings[0] == ("webhook refused for event type github.hook (missing-signature): "
                           "this event type accepts only signed deliveries: the "
                           "X-Hub-Signature-256 header is missing")
    assert _refused(signing) == {"missing-signature": 1.0, "bad-signature": 2.0,
                                 "stale-timestamp": 1.0, "bad-timestamp": 1.0}
    assert [(f["path"], f["status"], f["principal"]) for f in _fields(caplog, REQUEST_LOGGER)
            ][:1] == [("/v1/events/github.hook", 401, None)]


def test_a_dashboard_page_is_logged_with_its_viewer_and_a_probe_with_none(
        project: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, REQUEST_LOGGER), serve(project) as served, \
            served.client() as client:
        assert client.get("/runs").status_code == 200
        assert client.get("/healthz").status_code == 200
        assert eventually(lambda: len(_fields(caplog, REQUEST_LOGGER)) == 2)
    assert [(f["method"], f["path"], f["status"], f["principal"])
            for f in _fields(caplog, REQUEST_LOGGER)] == [
        ("GET", "/runs", 200, "anonymous"), ("GET", "/healthz", 200, None)]

"""Hostile requests to a served project, over a real socket, on every store: nothing they
send reaches past the project's catalog or freezes the server."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from server.server_support import Served, eventually, serve, write_project
from tarry.cli import app
from tarry.errors import ConfigError
from tarry.server.auth import Principals, check_bind

OUTSIDE_FLOW = """\
flow: outside
steps:
  - leak:
      set: { secret: "hunter2-outside-the-project" }
"""
NOT_A_FLOW = "password: hunter2-outside-the-project\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the project holding YAML files no request may reach."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "outside.yaml").write_text(OUTSIDE_FLOW)
    (folder / "secret.yaml").write_text(NOT_A_FLOW)
    return folder


@pytest.fixture
def served(tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
           ) -> Iterator[Served]:
    """The test project, served from its own folder (so relative paths resolve in it)."""
    root = write_project(tmp_path / "project", store_url)
    monkeypatch.chdir(root)
    with serve(root) as server:
        yield server


def _start(client: httpx.Client, flow: str) -> tuple[int, str]:
    response = client.post("/v1/runs", json={"flow": flow})
    return response.status_code, response.json()["error"]["message"]


@pytest.mark.parametrize("flow", [
    "{outside}/outside.yaml", "{outside}/secret.yaml", "{outside}/missing.yaml",
    "../elsewhere/outside.yaml", "../elsewhere/secret.yaml", "../elsewhere/missing.yaml",
    "flows/quick.yaml", "quick.yaml", "/etc/hostname", "..", "../quick", "./quick",
    "quick/", "QUICK",
])
def test_a_start_of_anything_but_a_catalog_flow_name_is_a_404_saying_nothing_of_the_disk(
        served: Served, outside: Path, flow: str) -> None:
    name = flow.format(outside=outside)
    with served.client() as client:
        status, message = _start(client, name)
        runs = client.get("/v1/runs").json()["runs"]
    shown = name if len(name) <= 100 else name[:97] + "..."
    refusal = f"no flow named '{shown}' among the project's flows"
    assert (status, message) in {(404, refusal), (404, f"{refusal} (did you mean 'quick'?)")}
    assert runs == []


def test_a_missing_and_an_existing_file_outside_the_project_answer_alike(
        served: Served, outside: Path) -> None:
    with served.client() as client:
        answers = {_start(client, str(outside / name))[1].replace(name, "NAME")
                   for name in ("outside.yaml", "secret.yaml", "missing.yaml")}
    assert len(answers) == 1


def test_a_refused_name_never_shows_the_server_s_folder(served: Served) -> None:
    with served.client() as client:
        _, message = _start(client, "qiuck")
    assert message == "no flow named 'qiuck' among the project's flows (did you mean 'quick'?)"
    assert str(served.settings.root) not in message


def test_a_catalog_flow_still_starts_by_name(served: Served) -> None:
    with served.client() as client:
        response = client.post("/v1/runs", json={"flow": "quick"},
                               headers={"Idempotency-Key": "k1"})
        by_path = client.post("/v1/runs", json={"flow": "flows/quick.yaml"},
                              headers={"Idempotency-Key": "k2"})
    assert response.status_code == 201
    assert by_path.status_code == 404


EMAIL = (r"^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}"
         r"(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$")
"""The probe's e-mail pattern: 6.7 s on 27 characters with Python's ``re``, the server still."""
REDOS_EVENTS = f"""
events:
  signup:
    correlate_on: [user]
    schema:
      properties:
        email: {{ pattern: {json.dumps(EMAIL)} }}
        name: {{ pattern: "(a+)+$" }}
"""


@pytest.mark.parametrize("data", [
    {"user": "u1", "email": "a" * 27},
    {"user": "u1", "name": "a" * 41 + "!"},
])
def test_a_redos_payload_is_refused_in_milliseconds_and_the_server_keeps_serving(
        tmp_path: Path, store_url: str, data: dict[str, str]) -> None:
    root = write_project(tmp_path / "project", store_url, events=REDOS_EVENTS)
    with serve(root) as served, served.client() as client:
        client.timeout = httpx.Timeout(5)
        began = time.perf_counter()
        response = client.post("/v1/events/signup", json={"data": data})
        took = time.perf_counter() - began
        health = client.get("/healthz")
    assert response.status_code == 422
    assert took < 2.0  # Python's re: 6.7 s and minutes
    assert health.status_code == 200


@pytest.mark.parametrize(("body", "headers", "refused"), [
    ({"id": "a/b"}, {}, "'a/b' contains '/', which the inbox's URLs (/v1/events/{id}) cannot "
                        "hold; use another separator, such as ':'"),
    ({}, {"Idempotency-Key": "order/7"}, "'order/7' contains '/', which the inbox's URLs "
                                         "(/v1/events/{id}) cannot hold; use another "
                                         "separator, such as ':'"),
    ({"id": ".."}, {}, "'..' cannot be named in the inbox's URLs (/v1/events/{id}); choose "
                       "another"),
    ({"id": "."}, {}, "'.' cannot be named in the inbox's URLs (/v1/events/{id}); choose "
                      "another"),
])
def test_an_event_id_that_cannot_be_named_in_a_url_is_refused_at_send(
        served: Served, body: dict[str, str], headers: dict[str, str], refused: str) -> None:
    data = {"deal": "d1", "approved": True}
    with served.client() as client:
        response = client.post("/v1/events/deal.approved", json={"data": data, **body},
                               headers=headers)
        inbox = client.get("/v1/events").json()["events"]
    assert response.status_code == 422
    assert response.json()["error"]["message"] == f"the event id: {refused}"
    assert inbox == []


def test_an_event_id_with_another_separator_is_read_redelivered_and_discarded(
        served: Served) -> None:
    with served.client() as client:
        sent = client.post("/v1/events/deal.approved",
                           json={"data": {"deal": "d1", "approved": True}, "id": "order:7"})
        read = client.get("/v1/events/order:7")
        discarded = client.post("/v1/events/order:7/discard")
    assert (sent.status_code, read.status_code, discarded.status_code) == (202, 200, 200)
    assert discarded.json()["state"] == "discarded"


def _abort_upload(served: Served, path: str, content_type: str) -> None:
    """Send the head of a POST and a part of its body, then hang up."""
    host, port = served.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as connection:
        connection.sendall(f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: "
                           f"{content_type}\r\nContent-Length: 1000\r\n\r\n".encode()
                           + b'{"data": {"deal": ')
        time.sleep(0.2)


@pytest.mark.parametrize(("path", "content_type"), [
    ("/v1/events/deal.approved", "application/json"),
    ("/v1/runs", "application/json"),
    ("/events/e1/redeliver", "application/x-www-form-urlencoded"),
])
def test_an_aborted_upload_logs_one_short_line_and_no_traceback(
        served: Served, caplog: pytest.LogCaptureFixture, path: str, content_type: str) -> None:
    caplog.set_level(logging.INFO)
    _abort_upload(served, path, content_type)
    with served.client() as client:  # the server goes on serving
        assert client.get("/healthz").status_code == 200
    time.sleep(0.2)
    assert [record for record in caplog.records if record.exc_info] == []
    lines = [record.getMessage() for record in caplog.records  # besides its request line
             if path in record.getMessage() and record.name != "tarry.server.requests"]
    assert len(lines) <= 1
    assert all("\n" not in line for line in lines)


@pytest.mark.parametrize(("env", "refused"), [
    ({"TARRY_API_TOKEN": "x"}, "TARRY_API_TOKEN is 1 character long"),
    ({"TARRY_API_TOKEN": "x" * 15}, "TARRY_API_TOKEN is 15 characters long"),
    ({"TARRY_API_TOKEN": "x" * 32, "TARRY_API_TOKENS": "alice=secret"},
     "the token of 'alice' in TARRY_API_TOKENS is 6 characters long"),
])
def test_a_short_token_is_refused_for_a_public_bind(
        tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch,
        env: dict[str, str], refused: str) -> None:
    monkeypatch.chdir(write_project(tmp_path / "project", store_url))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--port", "0"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"error: refusing to listen on 0.0.0.0: {refused}, and a token must have at least 16 "
        "beyond 127.0.0.1 (make one with 'openssl rand -hex 32'), or listen on 127.0.0.1")
    assert "secret" not in result.output


def test_check_bind_takes_a_short_token_on_loopback_only() -> None:
    check_bind("127.0.0.1", Principals({"api": "x"}))
    check_bind("0.0.0.0", Principals({"api": "x" * 16}))
    with pytest.raises(ConfigError):
        check_bind("0.0.0.0", Principals({"api": "x" * 15}))


def test_a_flow_of_the_project_that_does_not_load_is_refused_without_the_server_s_folder(
        tmp_path: Path, store_url: str) -> None:
    flows = {"broken": "flow: broken\nsteps:\n  - x: { sett: 1 }\n"}
    root = write_project(tmp_path / "project", store_url, flows=flows)
    with serve(root) as served, served.client() as client:
        response = client.post("/v1/runs", json={"flow": "broken"})
    assert response.status_code == 422
    assert response.json()["error"]["message"].startswith("flows/broken.yaml:3:")
    assert str(root) not in response.text


BULK_EVENTS = """
events:
  bulk:
    correlate_on: [id]
    schema:
      patternProperties:
        "^a[0-9]+$": { type: string, pattern: "^(x+)+y?$" }
        "^b": { type: integer }
      additionalProperties: { type: string, pattern: "^[a-z]+$" }
"""


def _healthz_waits(served: Served, call: Callable[[httpx.Client], httpx.Response]
                   ) -> tuple[httpx.Response, float, list[float]]:
    """``call``'s response and how long it took, with how long each /healthz (which asks
    the store) asked meanwhile waited."""
    waits: list[float] = []
    done = threading.Event()
    with served.client() as client, served.client() as prober:
        def probe() -> None:
            while not done.is_set():
                began = time.perf_counter()
                assert prober.get("/healthz").status_code == 200
                waits.append(time.perf_counter() - began)

        thread = threading.Thread(target=probe)
        thread.start()
        began = time.perf_counter()
        response = call(client)
        took = time.perf_counter() - began
        done.set()
        thread.join()
    return response, took, waits


BULK = {"id": "1", **{f"a{index}": "x" * 12 for index in range(40_000)}}
"""A payload of 1 MiB with 40,000 keys: about a second to check against BULK_EVENTS."""


def test_checking_a_large_payload_against_a_schema_holds_up_no_other_request(
        tmp_path: Path, store_url: str) -> None:
    root = write_project(tmp_path / "project", store_url, events=BULK_EVENTS)
    with serve(root) as served:
        response, took, waits = _healthz_waits(
            served, lambda client: client.post("/v1/events/bulk", json={"data": BULK}))
    assert response.status_code == 422  # "id" is not lower-case letters
    assert max(waits) < took / 2


def test_a_redelivery_s_large_payload_is_checked_holding_up_no_other_request(
        tmp_path: Path, store_url: str) -> None:
    root = write_project(tmp_path / "project", store_url, events=BULK_EVENTS)
    with serve(root) as served:
        with served.client() as client:
            sent = client.post("/v1/events/bulk", json={"data": {"id": "1"}, "id": "e1"})
        response, took, waits = _healthz_waits(
            served, lambda client: client.post("/v1/events/e1/redeliver", json={"data": BULK}))
    assert (sent.status_code, response.status_code) == (422, 422)  # still invalid: "id"
    assert max(waits) < took / 2


REVIEW_FLOW = """\
flow: review
steps:
  - review:
      ask:
        title: Review
        outcomes: [ok]
        form:
          type: object
          patternProperties:
            "^a[0-9]+$": { type: string, pattern: "^(x+)+y?$" }
          additionalProperties: { type: string, pattern: "^[a-z]+$" }
      timeout: 1d
"""


def test_a_task_answer_s_large_data_is_checked_holding_up_no_other_request(
        tmp_path: Path, store_url: str) -> None:
    root = write_project(tmp_path / "project", store_url, flows={"review": REVIEW_FLOW})
    with serve(root) as served:
        with served.client() as client:
            assert client.post("/v1/runs", json={"flow": "review"}).status_code == 201
            assert eventually(lambda: client.get("/v1/tasks").json()["tasks"])
            task = client.get("/v1/tasks").json()["tasks"][0]["id"]
        response, took, waits = _healthz_waits(served, lambda client: client.post(
            f"/v1/tasks/{task}/complete", json={"outcome": "ok", "data": BULK}))
    assert response.status_code == 422  # "id" is not lower-case letters
    assert max(waits) < took / 2

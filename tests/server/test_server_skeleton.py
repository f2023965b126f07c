"""The server's skeleton over a real socket: health, the error shape, the lifespan worker."""

from __future__ import annotations

from pathlib import Path

import pytest
from server_support import Served
from typer.testing import CliRunner

from tarry.cli import app


def test_healthz_reports_a_reachable_store_and_a_running_worker(served: Served) -> None:
    with served.client() as client:
        response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["store"], body["worker"]) == ("ok", "reachable", "running")


def test_an_unknown_endpoint_is_a_404_in_the_error_shape(served: Served) -> None:
    with served.client() as client:
        response = client.get("/v1/nothing")
    assert response.status_code == 404
    assert response.json() == {"error": {"type": "not_found", "message":
                                         "no such endpoint: GET /v1/nothing", "details": {}}}


def test_a_started_run_is_executed_by_the_in_process_worker(served: Served) -> None:
    with served.client() as client:
        started = client.post("/v1/runs", json={"flow": "quick"})
        assert started.status_code == 201
        run_id = started.json()["id"]
        for _ in range(200):
            if client.get(f"/v1/runs/{run_id}").json()["status"] == "succeeded":
                break
        document = client.get(f"/v1/runs/{run_id}").json()
    assert (document["status"], document["exit"]) == ("succeeded", "completed")


def test_serve_refuses_a_non_loopback_address_without_a_token(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--port", "0"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "error: refusing to listen on 0.0.0.0 without an API token: anyone who can reach it "
        "could start and cancel runs; set TARRY_API_TOKEN (or TARRY_API_TOKENS), or listen "
        "on 127.0.0.1")

"""Flows, metrics, health, the 503 of a busy store and the JSON log format."""

from __future__ import annotations

import json
import logging
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from server_support import Served, eventually, serve, start, status_becomes, write_project

from tarry.clock import VirtualClock
from tarry.errors import ConfigError
from tarry.server.logs import JsonFormatter
from tarry.store.sqlite import SQLiteStore


def test_flows_lists_every_flow_and_event_type(served: Served) -> None:
    with served.client() as client:
        listed = client.get("/v1/flows").json()
    assert [flow["name"] for flow in listed["flows"]] == ["approval", "nap", "quick"]
    assert listed["flows"][0]["inputs"] == ["deal"]
    assert [(e["type"], e["correlate_on"], e["buffer_seconds"], e["signature"])
            for e in listed["events"]] == [("deal.approved", ["deal"], 600.0, None)]
    assert listed["problems"] == []


def test_metrics_count_runs_events_and_the_resume_of_a_sent_event(served: Served) -> None:
    with served.client() as client:
        run_id = start(client, "approval", inputs={"deal": "m1"})["id"]
        assert status_becomes(client, run_id, "waiting")
        client.post("/v1/events/deal.approved", json={"data": {"deal": "m1", "approved": True}})
        assert status_becomes(client, run_id, "succeeded")
        text = client.get("/metrics").text
    lines = set(text.splitlines())
    assert 'tarry_runs{status="succeeded"} 1.0' in lines
    assert 'tarry_events_total{outcome="delivered"} 1.0' in lines
    assert "tarry_send_to_resume_seconds_count 1.0" in lines
    assert any(line.startswith("tarry_event_loop_lag_seconds_count") for line in lines)
    assert any(line.startswith("tarry_checkpoint_seconds_count") for line in lines)


BLINK_FLOW = """\
flow: blink
steps:
  - blink:
      wait: { for: 200ms }
"""

MORNING_FLOW = """\
flow: morning
on:
  - schedule: "0 9 * * *"
    timezone: UTC
steps:
  - hello:
      set: { text: good morning }
"""


def test_metrics_count_the_lateness_of_a_timer_the_served_worker_woke(tmp_path: Path) -> None:
    root = write_project(tmp_path, f"sqlite:///{tmp_path / 'tarry.db'}",
                         flows={"blink": BLINK_FLOW})
    with serve(root) as server, server.client() as client:
        run_id = start(client, "blink")["id"]
        assert status_becomes(client, run_id, "succeeded")
        text = client.get("/metrics").text
    assert "tarry_wake_lateness_seconds_count 1.0" in text.splitlines()


def test_the_served_worker_starts_the_runs_of_schedules(tmp_path: Path) -> None:
    root = write_project(tmp_path, f"sqlite:///{tmp_path / 'tarry.db'}",
                         flows={"morning": MORNING_FLOW})
    clock = VirtualClock(datetime(2026, 3, 2, 8, 59, 58, tzinfo=UTC))  # the worker skips ahead
    with serve(root, clock=clock) as server, server.client() as client:
        assert eventually(lambda: client.get("/v1/runs?flow=morning").json()["runs"])
        first = client.get("/v1/runs?flow=morning").json()["runs"][-1]
    assert first["created_at"] == "2026-03-02T09:00:00.000Z"


def test_a_store_busy_past_its_timeout_is_a_503_with_retry_after(tmp_path: Path) -> None:
    database = tmp_path / "busy.db"
    root = write_project(tmp_path / "p", f"sqlite:///{database}")
    store = SQLiteStore(database, busy_timeout=0.05)
    store.migrate()
    with serve(root, store=store, worker=False) as server, server.client() as client:
        blocker = sqlite3.connect(database, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            response = client.post("/v1/runs", json={"flow": "quick"})
            health = client.get("/healthz")
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "1"
    assert response.json()["error"] == {"type": "unavailable", "message": "the store is "
                                        "unavailable right now; retry later",
                                        "details": {"retry_after": 1}}
    assert (health.status_code, health.json()["worker"]) == (200, "stopped")


def test_a_json_log_line_carries_the_run_id() -> None:
    record = logging.LogRecord("tarry.worker", logging.WARNING, __file__, 1,
                               "run %s: could not commit", ("r1",), None)
    record.run_id = "r1"
    line = json.loads(JsonFormatter().format(record))
    assert {key: line[key] for key in ("level", "logger", "message", "run_id")} == {
        "level": "warning", "logger": "tarry.worker", "message": "run r1: could not commit",
        "run_id": "r1"}


def test_serve_refuses_a_malformed_token_list_without_showing_a_token(project: Path) -> None:
    with pytest.raises(ConfigError) as caught, serve(project, {"TARRY_API_TOKENS":
                                                               "ops=s3cret,broken"}):
        pass
    message = str(caught.value)
    assert message == ("TARRY_API_TOKENS: entry 2 is not name=token (a name of letters, "
                       "digits, '_', '.', '@' or '-', then '=' and the token)")
    assert "s3cret" not in message

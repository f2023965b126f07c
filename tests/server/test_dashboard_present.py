"""How the dashboard words instants, durations and what a run waits for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tarry.server.dashboard.present import (
    ago_or_ahead,
    conditions_text,
    human_instant,
    run_line,
    short_span,
    span_text,
    wait_line,
)

NOW = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)


def test_an_instant_reads_as_date_time_and_zone() -> None:
    assert human_instant("2026-09-01T09:00:00.000Z") == "2026-09-01 09:00:00 UTC"
    assert human_instant("2026-09-01T09:00:00.250Z") == "2026-09-01 09:00:00.250 UTC"
    assert human_instant(None) == ""


@pytest.mark.parametrize(("delta", "text"), [
    (timedelta(milliseconds=250), "250ms"),
    (timedelta(seconds=41), "41s"),
    (timedelta(minutes=14, seconds=5), "14m 5s"),
    (timedelta(hours=2, minutes=14, seconds=59), "2h 14m"),
    (timedelta(days=2, minutes=5), "2d"),
    (timedelta(days=2, hours=3), "2d 3h"),
    (timedelta(hours=-3), "3h"),
])
def test_a_span_reads_in_its_two_largest_units(delta: timedelta, text: str) -> None:
    assert short_span(delta) == text


def test_a_step_duration_in_milliseconds_reads_as_a_span_and_null_as_nothing() -> None:
    assert (span_text(8000), span_text(250), span_text(0), span_text(None)) == (
        "8s", "250ms", "0ms", "")


def test_an_instant_is_ahead_or_ago_from_now() -> None:
    assert ago_or_ahead("2026-09-01T11:14:00.000Z", NOW) == "in 2h 14m"
    assert ago_or_ahead("2026-09-01T08:55:00.000Z", NOW) == "5m ago"
    assert ago_or_ahead("2026-09-01T09:00:00.400Z", NOW) == "now"


def test_hold_conditions_read_as_one_line() -> None:
    conditions = [{"after": "2026-09-01T09:00:00.000Z"}, {"check": "ticket", "clear": True},
                  {"check": "ci", "clear": False}]
    assert conditions_text(conditions) == "after 2026-09-01 09:00:00 UTC + ticket (go) + ci"


@pytest.mark.parametrize(("waiting", "line"), [
    ({"kind": "event", "step": "approval", "event_type": "slack.approval",
      "match": {"message": "1700.1"}, "until": "2026-09-02T09:00:00.000Z"},
     "event slack.approval matching message=\"1700.1\" at step 'approval' · until "
     "2026-09-02 09:00:00 UTC (in 1d)"),
    ({"kind": "timer", "step": "cooling_off", "until": "2026-09-03T09:00:00.000Z"},
     "timer at step 'cooling_off' · until 2026-09-03 09:00:00 UTC (in 2d)"),
    ({"kind": "poll", "step": "indexed", "until": "2026-09-01T09:00:30.000Z"},
     "next poll at step 'indexed' · polls at 2026-09-01 09:00:30 UTC (in 30s)"),
    ({"kind": "retry", "step": "call", "until": "2026-09-01T09:01:00.000Z"},
     "retry at step 'call' · retries at 2026-09-01 09:01:00 UTC (in 1m)"),
    ({"kind": "hold", "step": None, "until": "2026-09-01T09:15:00.000Z",
      "conditions": [{"check": "ticket", "clear": False}]},
     "hold: ticket · next check 2026-09-01 09:15:00 UTC (in 15m)"),
    ({"kind": "event", "step": "reply", "until": "2026-09-01T10:00:00.000Z", "others": 2,
      "alternatives": [{"event_type": "email.reply", "match": {"id": 7}},
                       {"event_type": "portal.reply", "match": None}]},
     "event email.reply matching id=7 or event portal.reply at step 'reply' · until "
     "2026-09-01 10:00:00 UTC (in 1h) · and 2 other waits"),
])
def test_a_row_says_what_the_run_waits_for_and_until_when(waiting: dict[str, Any],
                                                          line: str) -> None:
    assert wait_line(waiting, NOW) == line


@pytest.mark.parametrize(("fields", "line"), [
    ({"status": "succeeded", "exit": "approved"}, "succeeded with exit 'approved'"),
    ({"status": "failed", "error": {"step": "boom", "type": "failed", "message": "no luck"}},
     "failed: step 'boom': failed: no luck"),
    ({"status": "refused", "reason": "hold-superseded"}, "refused: hold-superseded"),
    ({"status": "pending", "due_at": "2026-09-01T09:00:00.000Z"}, "due to start now"),
    ({"status": "running"}, "running on a worker"),
])
def test_a_row_of_a_run_that_waits_for_nothing_says_how_it_stands(fields: dict[str, Any],
                                                                  line: str) -> None:
    assert run_line({"waiting_for": None, **fields}, NOW) == line

"""The dashboard's session cookie and the parsers of what a browser sends (cursors, edited
payloads): exact answers for bad input, and fuzzing that finds no crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tarry.config import load_settings
from tarry.server.dashboard.inbox import decode_event_cursor, parse_payload
from tarry.server.dashboard.runs import decode_cursor
from tarry.server.dashboard.session import Session, Sessions


def _sessions(tmp_path: Path, **env: str) -> Sessions:
    return Sessions.for_settings(load_settings(tmp_path, env))


def test_a_session_reads_back_what_was_signed(tmp_path: Path) -> None:
    sessions = _sessions(tmp_path, TARRY_API_TOKEN="t")
    session = Session.fresh("alice")
    assert sessions.load(sessions.dump(session)) == session


def test_servers_with_the_same_tokens_read_each_others_sessions(tmp_path: Path) -> None:
    cookie = _sessions(tmp_path, TARRY_API_TOKEN="t").dump(Session.fresh("api"))
    assert _sessions(tmp_path, TARRY_API_TOKEN="t").load(cookie) is not None


def test_changing_a_token_ends_every_session(tmp_path: Path) -> None:
    cookie = _sessions(tmp_path, TARRY_API_TOKENS="alice=a,bob=b").dump(Session.fresh("bob"))
    assert _sessions(tmp_path, TARRY_API_TOKENS="alice=a,bob=c").load(cookie) is None
    assert _sessions(tmp_path, TARRY_API_TOKENS="alice=a").load(cookie) is None


def test_without_tokens_each_server_has_a_key_of_its_own(tmp_path: Path) -> None:
    cookie = _sessions(tmp_path).dump(Session.fresh("anonymous"))
    assert _sessions(tmp_path).load(cookie) is None


def test_an_expired_session_counts_for_nothing(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, {"TARRY_API_TOKEN": "t"})
    cookie = Sessions.for_settings(settings).dump(Session.fresh("api"))
    assert Sessions.for_settings(settings, max_age=-1).load(cookie) is None


def test_a_revoked_session_counts_for_nothing_and_the_oldest_revocation_is_forgotten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tarry.server.dashboard.session.REVOKED_KEPT", 2)
    sessions = _sessions(tmp_path, TARRY_API_TOKEN="t")
    first, second, third = (Session.fresh("alice") for _ in range(3))
    cookies = [sessions.dump(session) for session in (first, second, third)]
    sessions.revoke(first)
    assert [sessions.load(cookie) for cookie in cookies] == [None, second, third]
    sessions.revoke(second)
    sessions.revoke(third)
    assert [sessions.load(cookie) for cookie in cookies] == [first, None, None]


def test_the_csrf_token_must_be_the_sessions_own() -> None:
    session = Session.fresh("alice")
    assert session.accepts(session.csrf)
    assert not session.accepts(Session.fresh("alice").csrf)
    assert not session.accepts(None)
    assert not session.accepts("")


@given(st.text(max_size=300))
def test_any_cookie_value_loads_as_a_session_or_as_nothing(value: str) -> None:
    loaded = Sessions(b"key").load(value)
    assert loaded is None or isinstance(loaded, Session)


def test_a_cursor_names_a_position() -> None:
    instant, run_id = decode_cursor("1788253200000.abc")
    assert (instant.isoformat(), run_id) == ("2026-09-01T09:00:00+00:00", "abc")


@given(st.text(max_size=100))
def test_any_cursor_text_is_a_position_or_a_value_error(text: str) -> None:
    try:
        instant, run_id = decode_cursor(text)
    except ValueError:
        return
    assert run_id
    assert instant.tzinfo is not None


@given(st.text(max_size=200))
def test_any_edited_payload_is_an_object_or_a_reason(text: str) -> None:
    data, problem = parse_payload(text)
    assert (data is None) != (problem is None)
    if data is not None:
        assert json.loads(text) == data


def test_an_edited_payload_that_is_not_an_object_says_what_it_is() -> None:
    assert parse_payload('"yes"') == (
        None, "The payload must be a JSON object ({…}), not str.")
    assert parse_payload("") == (
        None, "The payload is not valid JSON: Expecting value (line 1, column 1).")


def test_an_edited_payload_of_hostile_json_says_why_it_is_refused() -> None:
    assert parse_payload('{"a": ' + "[" * 5000 + "]" * 5000 + "}") == (
        None, "The payload is not valid JSON: nested deeper than 64 levels of arrays and "
              "objects.")
    assert parse_payload('{"a": NaN}') == (
        None, "The payload is not valid JSON: 'NaN' is not a JSON number (JSON has no NaN or "
              "infinity).")


def test_an_inbox_cursor_names_a_position_whatever_the_type() -> None:
    instant, event_type, event_id = decode_event_cursor("1788253200000.slack.approval.e1")
    assert (instant.isoformat(), event_type, event_id) == (
        "2026-09-01T09:00:00+00:00", "slack.approval", "e1")


@given(st.text(max_size=100))
def test_any_inbox_cursor_text_is_a_position_or_a_value_error(text: str) -> None:
    try:
        instant, event_type, event_id = decode_event_cursor(text)
    except ValueError:
        return
    assert event_type
    assert event_id
    assert instant.tzinfo is not None

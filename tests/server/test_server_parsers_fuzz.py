"""Fuzzing every parser of untrusted input the server has: a hostile value gets the one clear
refusal of its parser and nothing else (never a 500, never a token in a message)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tarry.config import load_settings
from tarry.errors import ConfigError
from tarry.server.api.paging import decode_cursor, encode_cursor
from tarry.server.auth import Principals, bearer_token, check_bind
from tarry.server.contract import allowed_methods
from tarry.server.errors import ApiError
from tarry.server.signatures import SignatureRejected, sign, verify
from tarry.server.webhooks import delivery_id, handshake, sender_fields, signed_payload


def _raised(call: Callable[[], object]) -> Exception | None:
    """What ``call`` raised, or None."""
    try:
        call()
    except Exception as exc:
        return exc
    return None


NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
HEADERS = st.dictionaries(st.sampled_from(["x-tarry-signature", "x-hub-signature-256",
                                           "x-slack-signature", "x-slack-request-timestamp"]),
                          st.text(max_size=80))


@given(st.text(max_size=200))
def test_a_cursor_is_a_position_or_a_400(cursor: str) -> None:
    raised = _raised(lambda: decode_cursor(cursor, 1))
    assert raised is None or (isinstance(raised, ApiError) and raised.status == 400)


@given(st.datetimes(timezones=st.just(UTC), min_value=datetime(1971, 1, 1),
                    max_value=datetime(9000, 1, 1)), st.text(max_size=50))
def test_a_cursor_given_out_reads_back_as_its_position(at: datetime, key: str) -> None:
    decoded = decode_cursor(encode_cursor(at, key), 1)
    assert decoded is not None
    assert decoded[1] == (key,)
    assert abs((decoded[0] - at).total_seconds()) < 0.001


@given(st.sampled_from(["tarry", "github", "slack"]), st.binary(max_size=300), HEADERS)
def test_a_signature_check_accepts_or_rejects_and_never_fails_otherwise(
        scheme: str, body: bytes, headers: dict[str, str]) -> None:
    raised = _raised(lambda: verify(scheme, b"secret", body, headers, NOW))
    assert raised is None or (isinstance(raised, SignatureRejected) and raised.message)


@given(st.sampled_from(["tarry", "github", "slack"]), st.binary(max_size=300))
def test_what_a_sender_signs_is_accepted(scheme: str, body: bytes) -> None:
    verify(scheme, b"secret", body, sign(scheme, b"secret", body, NOW), NOW)


@given(st.sampled_from(["tarry", "github", "slack"]), st.binary(max_size=300),
       st.sampled_from(["application/json", "application/x-www-form-urlencoded"]))
def test_a_signed_body_is_json_a_slack_form_or_a_400(scheme: str, body: bytes,
                                                     content_type: str) -> None:
    raised = _raised(lambda: signed_payload(scheme, body, content_type))
    assert raised is None or (isinstance(raised, ApiError) and raised.status == 400)


@given(st.one_of(st.none(), st.text(max_size=100)))
def test_an_authorization_header_yields_a_token_or_none(header: str | None) -> None:
    token = bearer_token(header)
    assert token is None or (token and token == token.strip())


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=120))
def test_a_token_list_is_principals_or_a_refusal_that_shows_no_token(value: str) -> None:
    raised = _raised(lambda: load_settings(env={"TARRY_API_TOKENS": value}))
    if raised is not None:
        assert isinstance(raised, ConfigError)
        tokens = [part.partition("=")[2].strip() for part in value.split(",")]
        assert not any(len(token) > 3 and token in str(raised) for token in tokens)
    else:
        settings = load_settings(env={"TARRY_API_TOKENS": value})
        principals = Principals.from_settings(settings)
        for name, token in settings.api_tokens.items():
            assert principals.authenticate(token) == name


@pytest.mark.parametrize(("host", "allowed"), [("127.0.0.1", True), ("::1", True),
                                               ("localhost", True), ("0.0.0.0", False),
                                               ("10.1.2.3", False), ("example.com", False)])
def test_only_a_loopback_address_may_be_bound_without_a_token(host: str, allowed: bool) -> None:
    if allowed:
        check_bind(host, Principals({}))
    else:
        with pytest.raises(ConfigError):
            check_bind(host, Principals({}))
    check_bind(host, Principals({"api": "t" * 16}))


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=12)
HANDSHAKE_PAYLOADS = JSON | st.fixed_dictionaries(
    {"type": st.sampled_from(["url_verification", "event_callback"])},
    optional={"challenge": JSON})


@given(st.sampled_from(["tarry", "github", "slack"]), HANDSHAKE_PAYLOADS,
       st.dictionaries(st.just("x-github-event"), st.sampled_from(["ping", "issues", ""])))
def test_a_handshake_is_answered_passed_on_or_a_400(scheme: str, payload: object,
                                                     headers: dict[str, str]) -> None:
    answer: dict[str, object] | None = None

    def answered() -> None:
        nonlocal answer
        answer = handshake(scheme, headers, payload)

    raised = _raised(answered)
    assert raised is None or (isinstance(raised, ApiError) and raised.status == 400)
    if answer is not None:
        assert answer.get("handshake") == "ping" or isinstance(answer.get("challenge"), str)


@given(st.sampled_from(["tarry", "github", "slack"]), JSON,
       st.dictionaries(st.sampled_from(["idempotency-key", "x-github-delivery",
                                        "x-github-event", "x-slack-retry-num"]),
                       st.text(max_size=12)))
def test_a_delivery_id_is_a_nonempty_text_or_none_and_the_payload_keeps_its_fields(
        scheme: str, payload: object, headers: dict[str, str]) -> None:
    found = delivery_id(scheme, headers, payload)
    assert found is None or (isinstance(found, str) and found)
    added = sender_fields(scheme, headers, payload)
    if isinstance(payload, dict):
        assert isinstance(added, dict)
        assert {k: v for k, v in added.items() if k in payload} == payload
    else:
        assert added is payload


PATHS = {"/v1/runs": ["GET", "POST"], "/v1/runs/{run_id}": ["GET"],
         "/v1/runs/{run_id}/cancel": ["POST"], "/v1/events/{event}": ["GET", "POST"],
         "/v1/events/{event_id}/redeliver": ["POST"]}
DOCUMENT = {"paths": {path: {method.lower(): {} for method in methods}
                      for path, methods in PATHS.items()}}
SEGMENT = st.text(st.characters(blacklist_characters="/"), min_size=1, max_size=30)


@given(st.sampled_from(sorted(PATHS)), st.lists(SEGMENT, min_size=3, max_size=3))
def test_a_405_allows_the_methods_of_the_template_a_path_fits(template: str,
                                                               values: list[str]) -> None:
    parts = template.split("/")
    path = "/".join(values.pop() if part.startswith("{") else part for part in parts)
    assert allowed_methods(DOCUMENT, path) == PATHS[template]


@given(st.text(max_size=120))
def test_any_path_allows_documented_methods_or_none(path: str) -> None:
    assert allowed_methods(DOCUMENT, path) in [[], *PATHS.values()]

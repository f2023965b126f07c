"""Signed event types: their secrets, read once at start, and reading a signed delivery.

A type whose manifest declares ``secret_env`` accepts an event only with a valid signature
(401 otherwise) and needs no bearer token. Its body is the event's payload itself: JSON, or
(``application/x-www-form-urlencoded``) a ``payload=`` field holding the JSON, as GitHub's
form deliveries and Slack's interactive payloads send it. A Slack form without ``payload`` is
a slash command, read as its fields (``{"command": "/deploy", "text": "web", …}``).

What the sender adds:

- GitHub's ``X-GitHub-Event`` header (``issues``, ``pull_request``, …) is added to the
  payload as ``x_github_event`` (unless the payload has that field), so that a trigger or an
  ``accept`` can tell the kinds of one webhook apart; the ``action`` is GitHub's own field.
- The dedup id is the ``Idempotency-Key`` header, else GitHub's ``X-GitHub-Delivery``, else
  for Slack the Events API's ``event_id``, an interaction's first ``action_ts``, or the
  ``trigger_id`` of any other interaction or slash command: a delivery a sender retries (Slack
  marks its retries ``X-Slack-Retry-Num``) carries the same id and is a ``duplicate``, and a
  retry of one that never arrived is recorded, not lost.

Two deliveries are a sender's handshake rather than an event, answered 200 once their
signature is valid and recorded nowhere: GitHub's ``ping`` (``X-GitHub-Event: ping``, sent
when a webhook is created) and Slack's ``url_verification`` (sent when an Events API request
URL is set), whose ``challenge`` is echoed back as Slack requires.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

from tarry.errors import ConfigError
from tarry.language.jsontext import parse_json
from tarry.language.manifests import Manifest
from tarry.secrets import unset_secrets
from tarry.server.errors import ApiError

__all__ = ["FORM_CONTENT_TYPE", "GITHUB_EVENT_FIELD", "delivery_id", "handshake", "read_secrets",
           "sender_fields", "signed_payload"]

FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"
GITHUB_EVENT_FIELD = "x_github_event"
"""The payload field that holds GitHub's ``X-GitHub-Event`` header."""


def read_secrets(manifests: Mapping[str, Manifest],
                 environ: Mapping[str, str]) -> dict[str, bytes]:
    """Each signed type's secret; a variable that is unset or empty refuses to start."""
    unset = unset_secrets(manifests, environ)
    if unset:
        raise ConfigError("; ".join(unset))
    return {manifest.type: environ[manifest.secret_env].encode()
            for manifest in manifests.values() if manifest.secret_env is not None}


def signed_payload(scheme: str, body: bytes, content_type: str) -> Any:
    """The payload of a signed delivery: the JSON body, its form field ``payload``, or (a
    Slack slash command) the form's fields."""
    if content_type.split(";", maxsplit=1)[0].strip().lower() == FORM_CONTENT_TYPE:
        fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
        if "payload" in fields:
            return _json(fields["payload"][0].encode(), "the 'payload' field")
        if scheme == "slack":
            return {name: values[0] for name, values in fields.items()}
        raise ApiError(400, "a form-encoded event needs a 'payload' field holding its JSON")
    return _json(body, "the request body")


def sender_fields(scheme: str, headers: Mapping[str, str], payload: Any) -> Any:
    """``payload`` with what the sender says in headers only: GitHub's event kind."""
    kind = headers.get("x-github-event")
    if scheme != "github" or not kind or not isinstance(payload, dict) \
            or GITHUB_EVENT_FIELD in payload:
        return payload
    return {**payload, GITHUB_EVENT_FIELD: kind}


def delivery_id(scheme: str, headers: Mapping[str, str], payload: Any) -> str | None:
    """The sender's id of this delivery, for dedup (see the module)."""
    given = headers.get("idempotency-key") or headers.get("x-github-delivery")
    if given or scheme != "slack":
        return given or None
    actions = _field(payload, "actions")
    first = actions[0] if isinstance(actions, list) and actions else None
    for candidate in (_field(payload, "event_id"), _field(first, "action_ts"),
                      _field(payload, "trigger_id")):
        if isinstance(candidate, str) and candidate:
            return candidate
    return None


def handshake(scheme: str, headers: Mapping[str, str], payload: Any) -> dict[str, Any] | None:
    """The answer to a sender's handshake (see the module), or None for an event."""
    if scheme == "github" and headers.get("x-github-event") == "ping":
        return {"handshake": "ping", "hook_id": _field(payload, "hook_id")}
    if scheme == "slack" and _field(payload, "type") == "url_verification":
        challenge = _field(payload, "challenge")
        if not isinstance(challenge, str):
            raise ApiError(400, "a Slack url_verification request needs a 'challenge' string")
        return {"challenge": challenge}
    return None


def _field(payload: Any, name: str) -> Any:
    return payload.get(name) if isinstance(payload, dict) else None


def _json(text: bytes, what: str) -> Any:
    try:
        return parse_json(text.decode("utf-8"))
    except ValueError:  # not JSON, not UTF-8, nested too deep, NaN, a number too long
        raise ApiError(400, f"{what} is not valid JSON") from None

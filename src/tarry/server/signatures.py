"""Webhook signatures: how a sender without a bearer token proves it holds the
event type's shared secret. Pure: no I/O, the instant is passed in.

| scheme   | header                                   | signed text                     |
| -------- | ---------------------------------------- | ------------------------------- |
| `tarry`  | `X-Tarry-Signature: sha256=<hex>`        | the body                        |
| `github` | `X-Hub-Signature-256: sha256=<hex>`      | the body                        |
| `slack`  | `X-Slack-Signature: v0=<hex>` and        | `v0:{timestamp}:{body}`, with   |
|          | `X-Slack-Request-Timestamp: <unix secs>` | the timestamp within 5 minutes  |

Every signature is an HMAC-SHA256 with the secret as key, compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

__all__ = ["SLACK_WINDOW", "SignatureRejected", "sign", "verify"]

SLACK_WINDOW = timedelta(minutes=5)
"""How far a Slack request's timestamp may be from now (either way): older is a replay."""


class SignatureRejected(Exception):
    """The delivery is not signed with the type's secret; ``message`` says what is wrong,
    ``reason`` names it in one token (the ``reason`` label of the refusals' metric):
    ``missing-signature``, ``bad-signature``, ``bad-timestamp`` or ``stale-timestamp``."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        self.message = message
        super().__init__(message)


@dataclass(frozen=True)
class _Scheme:
    header: str
    prefix: str
    signed: Callable[[bytes, Mapping[str, str], datetime], bytes]


def _body(body: bytes, headers: Mapping[str, str], now: datetime) -> bytes:
    return body


def _slack_text(body: bytes, headers: Mapping[str, str], now: datetime) -> bytes:
    stamp = headers.get("x-slack-request-timestamp", "").strip()
    if not stamp.isdecimal():
        raise SignatureRejected("bad-timestamp", "the X-Slack-Request-Timestamp header is "
                                "missing or not a number of seconds")
    if abs(now.timestamp() - int(stamp)) > SLACK_WINDOW.total_seconds():
        raise SignatureRejected("stale-timestamp", "the X-Slack-Request-Timestamp is more "
                                "than 5 minutes from now: a stale or replayed request")
    return b"v0:" + stamp.encode() + b":" + body


_SCHEMES: Mapping[str, _Scheme] = {
    "tarry": _Scheme("x-tarry-signature", "sha256=", _body),
    "github": _Scheme("x-hub-signature-256", "sha256=", _body),
    "slack": _Scheme("x-slack-signature", "v0=", _slack_text),
}


def _digest(secret: bytes, text: bytes) -> str:
    return hmac.new(secret, text, hashlib.sha256).hexdigest()


def verify(scheme: str, secret: bytes, body: bytes, headers: Mapping[str, str],
           now: datetime) -> None:
    """Accept the delivery or raise :class:`SignatureRejected`; ``headers`` has lower-case
    names."""
    spec = _SCHEMES[scheme]
    offered = headers.get(spec.header, "").strip()
    if not offered:
        raise SignatureRejected("missing-signature", "this event type accepts only signed "
                                f"deliveries: the {_title(spec.header)} header is missing")
    expected = spec.prefix + _digest(secret, spec.signed(body, headers, now))
    if not hmac.compare_digest(offered.encode(), expected.encode()):
        raise SignatureRejected("bad-signature", f"the {_title(spec.header)} signature does "
                                "not match the body signed with this event type's secret")


def sign(scheme: str, secret: bytes, body: bytes, now: datetime) -> dict[str, str]:
    """The headers a sender of ``scheme`` adds to ``body`` (what tests and clients use)."""
    spec = _SCHEMES[scheme]
    headers = {"x-slack-request-timestamp": str(int(now.timestamp()))} if scheme == "slack" \
        else {}
    headers[spec.header] = spec.prefix + _digest(secret, spec.signed(body, headers, now))
    return headers


def _title(header: str) -> str:
    return "-".join(part.capitalize() for part in header.split("-"))

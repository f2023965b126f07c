"""Stand-ins for the systems the example flows talk to: a stock service, a payment provider,
Slack and a vendor portal.

A real project calls its clients here; these fakes only compute what such a call would
return, deterministically, so the examples behave the same on every machine (tests replace
them with their own fakes). Steps are recorded, so whatever a step returns — a random id, the
clock — is returned again on every replay: a step need not be deterministic, only the flow
code between steps.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from typing import Any

__all__ = ["payment_status", "post_to_slack", "release_stock", "request_quote",
           "reserve_stock", "ship"]

logger = logging.getLogger("shop")

SETTLES_AFTER = 3
"""How many polls the fake payment provider answers ``pending`` before ``completed``."""

_polls: Counter[str] = Counter()


def reserve_stock(order_id: str) -> dict[str, Any]:
    """Reserve the order's items; the reservation."""
    logger.info("reserving stock for %s", order_id)
    return {"id": f"res-{order_id}", "order": order_id}


def release_stock(reservation_id: str) -> None:
    """Give the reserved items back."""
    logger.info("releasing %s", reservation_id)


def payment_status(order_id: str) -> str:
    """The payment provider's view of the order: pending, completed or cancelled."""
    _polls[order_id] += 1
    return "completed" if _polls[order_id] >= SETTLES_AFTER else "pending"


def ship(order_id: str, reservation_id: str) -> dict[str, Any]:
    """Hand the reserved items to the carrier; the shipment."""
    return {"tracking": f"TRK-{order_id}", "reservation": reservation_id}


def post_to_slack(channel: str, text: str, key: str) -> dict[str, Any]:
    """Post ``text`` to ``channel``; the message, whose ``ts`` a reply refers to. ``key``
    identifies the post, so that posting again after a crash gives the same message."""
    logger.info("%s: %s", channel, text)
    return {"channel": channel, "ts": "ts-" + hashlib.sha256(key.encode()).hexdigest()[:12]}


def request_quote(vendor: str, request: str) -> None:
    """Ask ``vendor`` for a quote; it answers with a ``vendor.quote`` event naming
    ``request``."""
    logger.info("asking %s for a quote (request %s)", vendor, request)

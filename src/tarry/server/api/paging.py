"""Keyset pagination: a page ends with an opaque ``next_cursor`` naming its last item's
position; the next request passes it as ``cursor``. Items created meanwhile never shift a
page, and a page costs the same however deep it is."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Annotated, Any

from fastapi import Query

from tarry.clock import from_millis, to_millis
from tarry.server.errors import ApiError

__all__ = ["Cursor", "Limit", "decode_cursor", "encode_cursor"]

Cursor = Annotated[str | None, Query(max_length=1024, description=(
    "The next_cursor of the previous page; omit for the first page."))]
Limit = Annotated[int, Query(ge=1, le=500, description="At most this many items (1–500).")]


def encode_cursor(at: datetime, *keys: str) -> str:
    """The cursor of an item at instant ``at`` with the tie-breaking ``keys``."""
    text = json.dumps([to_millis(at), *keys], separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, keys: int) -> tuple[datetime, tuple[str, ...]] | None:
    """The position a cursor names, as its instant and its ``keys`` tie-breakers (None for
    no cursor); a cursor this server did not give out is a 400."""
    if cursor is None:
        return None
    try:
        value: Any = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, binascii.Error):
        value = None
    if not (isinstance(value, list) and len(value) == keys + 1 and isinstance(value[0], int)
            and all(isinstance(key, str) for key in value[1:])
            and 0 <= value[0] < 2 ** 53):
        raise ApiError(400, "the cursor is not one this server gave out; pass a page's "
                            "next_cursor as it came", details={"cursor": cursor[:100]})
    return from_millis(value[0]), tuple(value[1:])

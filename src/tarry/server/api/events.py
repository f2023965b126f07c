"""``/v1/events``: send events (bearer token, or a signature for webhook types) and the inbox."""

from __future__ import annotations

from fastapi import APIRouter

from tarry.server.api.context import error_responses

__all__ = ["router"]

router = APIRouter(prefix="/v1/events", tags=["events"], responses=error_responses(401, 503))

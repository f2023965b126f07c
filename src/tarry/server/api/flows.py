"""``/v1/flows``: the loaded flows and the declared event types."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from tarry.server.api.context import error_responses
from tarry.server.auth import principal_of_request

__all__ = ["router"]

router = APIRouter(prefix="/v1/flows", tags=["flows"],
                   dependencies=[Depends(principal_of_request)],
                   responses=error_responses(401, 503))

"""``/v1/held``: runs held before their first step."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from tarry.model import RunStatus
from tarry.server.api.context import EngineDep, error_responses
from tarry.server.api.models import RunList
from tarry.server.api.paging import Cursor, Limit
from tarry.server.api.runs import run_page
from tarry.server.auth import principal_of_request

__all__ = ["router"]

router = APIRouter(prefix="/v1/held", tags=["runs"],
                   dependencies=[Depends(principal_of_request)],
                   responses=error_responses(400, 401, 422, 503))


@router.get("", response_model=RunList)
async def list_held(*, engine: EngineDep, cursor: Cursor = None,
                    limit: Limit = 50) -> dict[str, Any]:
    """Held runs, newest first, in keyset pages: ``waiting_for`` says what the hold waits
    for and ``due_at`` when it is next looked at. Cancel one with ``POST
    /v1/runs/{id}/cancel``."""
    return await run_page(engine, cursor, limit, status=RunStatus.HELD)

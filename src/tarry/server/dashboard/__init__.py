"""The dashboard: server-rendered pages at ``/``, included by
:func:`tarry.server.app.create_app` with ``include_in_schema=False``.

It reads the engine, the settings and the principals from the application's state (as the
API does) and needs nothing else: its templates, stylesheet and script ship in this package,
and no page loads anything from another site.
"""

from __future__ import annotations

from fastapi import APIRouter

from tarry.server.dashboard import (
    access,
    assets,
    flowpage,
    held,
    inbox,
    operate,
    other,
    runs,
    tasks,
)

__all__ = ["router"]

router = APIRouter()
"""The dashboard's pages."""

for _part in (access, runs, operate, held, inbox, tasks, other, flowpage, assets):
    router.include_router(_part.router)

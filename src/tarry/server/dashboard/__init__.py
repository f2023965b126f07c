"""The dashboard (SPEC 8.3): server-rendered pages at ``/``, included by
:func:`tarry.server.app.create_app` with ``include_in_schema=False``."""

from __future__ import annotations

from fastapi import APIRouter

__all__ = ["router"]

router = APIRouter()
"""The dashboard's pages."""

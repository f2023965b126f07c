"""The dashboard's two static files, shipped in the package: its stylesheet and its script."""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter
from fastapi.responses import Response

from tarry.server.dashboard.web import DashboardRoute, PageError

__all__ = ["router"]

router = APIRouter(route_class=DashboardRoute)

_ASSETS = {"dashboard.css": "text/css; charset=utf-8",
           "dashboard.js": "text/javascript; charset=utf-8"}
"""The files served, by name, with their media types."""


@router.get("/assets/{name}")
async def asset(name: str) -> Response:
    """One of the dashboard's static files."""
    if name not in _ASSETS:
        raise PageError(404, "No such file", f"The dashboard has no file '{name}'.")
    body = files("tarry.server.dashboard").joinpath("static", name).read_bytes()
    return Response(body, media_type=_ASSETS[name],
                    headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"})

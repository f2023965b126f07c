"""The dashboard's static files, shipped in the package: its stylesheet and its script, and the
stylesheet of the flow drawings (:mod:`tarry.graph`'s own)."""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter
from fastapi.responses import Response

from tarry.server.dashboard.web import DashboardRoute, PageError

__all__ = ["router"]

router = APIRouter(route_class=DashboardRoute)

_CSS = "text/css; charset=utf-8"
_ASSETS = {"dashboard.css": ("tarry.server.dashboard", "static/dashboard.css", _CSS),
           "dashboard.js": ("tarry.server.dashboard", "static/dashboard.js",
                            "text/javascript; charset=utf-8"),
           "graph.css": ("tarry.graph", "graph.css", _CSS)}
"""The files served, by name: the package and path each is read from, its media type."""


@router.get("/assets/{name}")
async def asset(name: str) -> Response:
    """One of the dashboard's static files."""
    if name not in _ASSETS:
        raise PageError(404, "No such file", f"The dashboard has no file '{name}'.")
    package, path, media_type = _ASSETS[name]
    body = files(package).joinpath(path).read_bytes()
    return Response(body, media_type=media_type,
                    headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"})

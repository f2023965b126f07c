"""``tarry serve``: the HTTP API, the dashboard, health and metrics, and a worker, in one
process (SPEC 8.2, 8.3)."""

from __future__ import annotations

from tarry.server.app import create_app

__all__ = ["create_app"]

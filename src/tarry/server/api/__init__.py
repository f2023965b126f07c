"""The /v1 HTTP API: one router per resource, gathered in :data:`ROUTERS`.

A new resource (``/v1/tasks``) is a module here with its ``router``, added to the list.
"""

from __future__ import annotations

from fastapi import APIRouter

from tarry.server.api import events, flows, held, operate, runs, tasks

__all__ = ["ROUTERS"]

ROUTERS: tuple[APIRouter, ...] = (runs.router, operate.router, held.router, events.router,
                                  tasks.router, flows.router)
"""Every /v1 router, in the order the OpenAPI document lists them."""

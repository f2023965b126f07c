"""What every route reaches through the request: the engine, the worker, the principal."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from tarry.engine.runtime import Engine
from tarry.server.errors import ERROR_TYPES, ErrorBody

__all__ = ["EngineDep", "error_responses", "wake_worker"]


def _engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


EngineDep = Annotated[Engine, Depends(_engine)]
"""A route parameter of this type is the server's engine."""


def wake_worker(request: Request) -> None:
    """Have the in-process worker look for due runs now (after a start or an event)."""
    worker = request.app.state.worker
    if worker is not None:
        worker.wake()


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` of these error statuses, each in the one error shape."""
    return {status: {"model": ErrorBody, "description": ERROR_TYPES[status]}
            for status in statuses}

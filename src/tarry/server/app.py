"""The ASGI application of ``tarry serve``: the /v1 API, the dashboard, health and metrics,
with the project's worker running in the same process.

:func:`create_app` builds it around an :class:`~tarry.engine.runtime.Engine`; its lifespan
starts the worker with the server and, on shutdown (SIGTERM), stops it claiming, lets the
runs in flight finish or checkpoint, and only then lets the process end.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from importlib.metadata import PackageNotFoundError, version

from fastapi import FastAPI

from tarry.config import Settings
from tarry.engine.runtime import Engine
from tarry.server import dashboard, health
from tarry.server.api import ROUTERS
from tarry.server.auth import Principals
from tarry.server.bodylimit import BodyLimit
from tarry.server.errors import install_error_handlers

__all__ = ["create_app"]

logger = logging.getLogger("tarry.server")

_DESCRIPTION = """The HTTP API of a tarry project: start runs, send events, see what waits.

Every `/v1` call needs `Authorization: Bearer <token>` when the server has a token
(`TARRY_API_TOKEN`, `TARRY_API_TOKENS`); an event type that declares a signature accepts
signed deliveries without one. Errors have one shape: `{"error": {"type", "message",
"details"}}`."""


def create_app(engine: Engine, settings: Settings, *, worker: bool = True,
               worker_concurrency: int = 16) -> FastAPI:
    """The application serving ``engine``; with ``worker`` (the default) its lifespan runs
    an in-process worker that a start or an event accepted by the server wakes at once."""
    app = FastAPI(title="tarry", version=_version(), description=_DESCRIPTION,
                  openapi_url="/openapi.json", docs_url="/docs", redoc_url=None,
                  lifespan=_lifespan(worker, worker_concurrency))
    app.state.engine = engine
    app.state.settings = settings
    app.state.principals = Principals.from_settings(settings)
    app.state.worker = None
    app.state.worker_task = None
    install_error_handlers(app)
    app.add_middleware(BodyLimit, limit=settings.limits.request_bytes)
    app.include_router(health.router)
    for router in ROUTERS:
        app.include_router(router)
    app.include_router(dashboard.router, include_in_schema=False)
    return app


def _lifespan(with_worker: bool,
              concurrency: int) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if not with_worker:
            yield
            return
        engine: Engine = app.state.engine
        worker = engine.worker(concurrency=concurrency)
        stop = asyncio.Event()
        app.state.worker = worker
        app.state.worker_task = asyncio.create_task(worker.run(stop))
        logger.info("worker %s started", worker.name)
        try:
            yield
        finally:
            stop.set()
            await app.state.worker_task
            logger.info("worker %s stopped", worker.name)

    return lifespan


def _version() -> str:
    try:
        return version("tarry")
    except PackageNotFoundError:
        return "0"

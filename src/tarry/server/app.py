"""The ASGI application of ``tarry serve``: the /v1 API, the dashboard, health and metrics,
with the project's worker running in the same process.

:func:`create_app` builds it around an :class:`~tarry.engine.runtime.Engine`; its lifespan
starts the worker with the server and, on shutdown (SIGTERM), stops it claiming, lets the
runs in flight finish or checkpoint, and only then lets the process end.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import cast

from fastapi import FastAPI

from tarry.config import Settings
from tarry.engine.runtime import Engine
from tarry.server import dashboard, health
from tarry.server.api import ROUTERS
from tarry.server.api.operate import resume_batches, stop_batches
from tarry.server.auth import Principals
from tarry.server.bodylimit import BodyLimit
from tarry.server.contract import install_contract
from tarry.server.errors import install_error_handlers
from tarry.server.metrics import Metrics, ObservedStore, probe_loop_lag
from tarry.server.requestlog import RequestLog
from tarry.server.webhooks import read_secrets
from tarry.store.aio import AsyncStore

__all__ = ["create_app"]

logger = logging.getLogger("tarry.server")

_DESCRIPTION = """The HTTP API of a tarry project: start runs, send events, see what waits.

Every `/v1` call needs `Authorization: Bearer <token>` when the server has a token
(`TARRY_API_TOKEN`, `TARRY_API_TOKENS`); an event type that declares a signature accepts
signed deliveries without one. Errors have one shape: `{"error": {"type", "message",
"details"}}`."""


def create_app(engine: Engine, settings: Settings, *, worker: bool = True,
               worker_concurrency: int = 16, environ: Mapping[str, str] | None = None) -> FastAPI:
    """The application serving ``engine``; with ``worker`` (the default) its lifespan runs
    an in-process worker that a start or an event accepted by the server wakes at once.

    ``environ`` (default ``os.environ``) holds the secrets of signed event types; one that
    is unset refuses to start (``ConfigError``), as does a malformed ``TARRY_API_TOKENS``.
    """
    app = FastAPI(title="tarry", version=_version(), description=_DESCRIPTION,
                  openapi_url=None, docs_url=None, redoc_url=None,
                  lifespan=_lifespan(worker, worker_concurrency))
    app.state.engine = engine
    app.state.settings = settings
    app.state.principals = Principals.from_settings(settings)
    app.state.secrets = read_secrets(engine.manifests, os.environ if environ is None
                                     else environ)
    app.state.metrics = Metrics(engine.store)
    app.state.worker = None
    app.state.worker_task = None
    app.state.batches = set()
    install_error_handlers(app)
    app.add_middleware(BodyLimit, limit=settings.limits.request_bytes)
    app.add_middleware(RequestLog)
    install_contract(app)
    app.include_router(health.router)
    for router in ROUTERS:
        app.include_router(router)
    app.include_router(dashboard.router, include_in_schema=False)
    return app


def _lifespan(with_worker: bool,
              concurrency: int) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stop = asyncio.Event()
        probe = asyncio.create_task(probe_loop_lag(app.state.metrics, stop))
        await resume_batches(app)
        try:
            if with_worker:
                async with _running_worker(app, concurrency, stop):
                    yield
            else:
                yield
        finally:
            stop.set()
            await probe
            await stop_batches(app)

    return lifespan


@asynccontextmanager
async def _running_worker(app: FastAPI, concurrency: int,
                          stop: asyncio.Event) -> AsyncIterator[None]:
    """The worker runs while the block does; on exit it stops claiming and lets the runs in
    flight finish or checkpoint."""
    engine: Engine = app.state.engine
    metrics: Metrics = app.state.metrics
    observed = cast(AsyncStore, ObservedStore(engine.async_store, metrics))
    worker = engine.worker(concurrency=concurrency, store=observed, on_wake=metrics.observe_wake)
    app.state.worker = worker
    app.state.worker_task = asyncio.create_task(worker.run(stop))
    logger.info("worker %s started", worker.name)
    try:
        yield
    finally:
        stop.set()
        await app.state.worker_task
        logger.info("worker %s stopped", worker.name)


def _version() -> str:
    try:
        return version("tarry")
    except PackageNotFoundError:
        return "0"

"""``tarry serve``: the HTTP API, the dashboard and a worker in one process."""

from __future__ import annotations

import logging
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer
import uvicorn

from tarry.cli.session import open_engine
from tarry.config import load_settings
from tarry.server.app import create_app
from tarry.server.auth import Principals, check_bind
from tarry.server.logs import LogFormat, configure_logging

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "serve"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8620

logger = logging.getLogger("tarry.server")

_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class _Server(uvicorn.Server):
    """uvicorn's server, ending with exit status 0 after a graceful stop on SIGTERM or
    SIGINT (uvicorn would raise the signal again once drained, so the process would die of
    it); a second signal still forces the exit."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Stop gracefully on SIGTERM and SIGINT while serving."""
        previous = {signum: signal.signal(signum, self.handle_exit) for signum in _STOP_SIGNALS}
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


def serve(
        ctx: typer.Context,
        host: Annotated[str, typer.Option(
            "--host", help="The address to listen on; one beyond this machine needs "
                           "TARRY_API_TOKEN (or TARRY_API_TOKENS).")] = DEFAULT_HOST,
        port: Annotated[int, typer.Option(
            "--port", min=0, max=65535, help="The port to listen on (0: any free one).")]
        = DEFAULT_PORT,
        log_format: Annotated[LogFormat, typer.Option(
            "--log-format", help="text, or json: one JSON object per line.")]
        = LogFormat.TEXT,
        concurrency: Annotated[int, typer.Option(
            "--concurrency", metavar="N", min=1, help="Runs the worker executes at once.")]
        = 16) -> None:
    """Serve the HTTP API and the dashboard, with a worker, until SIGTERM or SIGINT (requests
    in progress and runs in flight finish first)."""
    debug = bool(ctx.find_root().params.get("debug"))
    settings = load_settings()
    check_bind(host, Principals.from_settings(settings))
    configure_logging(log_format, logging.DEBUG if debug else logging.INFO)
    with open_engine(settings) as engine:
        app = create_app(engine, settings, worker_concurrency=concurrency)
        config = uvicorn.Config(app, host=host, port=port, log_config=None,
                                access_log=False, server_header=False,
                                timeout_graceful_shutdown=30)
        _Server(config).run()

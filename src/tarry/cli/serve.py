"""``tarry serve``: the HTTP API, the dashboard and a worker in one process."""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from tarry.cli.session import open_engine
from tarry.config import load_settings
from tarry.engine.worker import freeze_heap
from tarry.server.logs import LogFormat, configure_logging

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "serve"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8620


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
    # The server's modules (FastAPI, uvicorn) are imported only to serve: every other
    # command starts without them.
    from tarry.server.app import create_app  # noqa: PLC0415
    from tarry.server.auth import Principals, check_bind  # noqa: PLC0415
    from tarry.server.serving import run_until_stopped  # noqa: PLC0415

    debug = bool(ctx.find_root().params.get("debug"))
    settings = load_settings()
    check_bind(host, Principals.from_settings(settings))
    configure_logging(log_format, logging.DEBUG if debug else logging.INFO)
    with open_engine(settings) as engine:
        app = create_app(engine, settings, worker_concurrency=concurrency)
        freeze_heap()
        run_until_stopped(app, host, port)

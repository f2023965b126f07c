"""``tarry worker``: execute due runs until stopped, or once (``--once``)."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Annotated

import typer

from tarry import eventloop
from tarry.cli.session import open_engine
from tarry.config import load_settings
from tarry.engine.worker import Worker, freeze_heap
from tarry.secrets import RedactingFilter, Redactor, redact_database_url

__all__ = ["worker"]

logger = logging.getLogger("tarry.worker")

_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def worker(
        ctx: typer.Context,
        concurrency: Annotated[int, typer.Option(
            "--concurrency", metavar="N", min=1, help="Runs executed at once.")] = 16,
        once: Annotated[bool, typer.Option(
            "--once", help="Handle everything due now, then exit.")] = False,
        lease: Annotated[float, typer.Option(
            "--lease", metavar="SECONDS", min=0.1,
            help="How long a claimed run stays this worker's without renewal; another "
                 "worker takes over a run whose lease lapsed. An action that heartbeats "
                 "must do so at least this often.")] = 30.0) -> None:
    """Execute due runs until SIGTERM or SIGINT (in-flight runs finish first)."""
    debug = bool(ctx.find_root().params.get("debug"))
    settings = load_settings()
    with open_engine(settings) as engine, \
            _log_to_stderr(logging.DEBUG if debug else logging.INFO, engine.redactor):
        executor = engine.worker(concurrency=concurrency, lease=timedelta(seconds=lease))
        if once:
            count = eventloop.run(executor.run_once())
            typer.echo(f"handled {count} due run{'' if count == 1 else 's'}")
            return
        eventloop.run(_run_until_signalled(executor, settings.database))


async def _run_until_signalled(executor: Worker, store_url: str) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in _STOP_SIGNALS:
        loop.add_signal_handler(signum, stop.set)
    logger.info("worker %s started on %s", executor.name, redact_database_url(store_url))
    logger.debug("%d objects of the start-up heap frozen", freeze_heap())
    try:
        await executor.run(stop)
    finally:
        for signum in _STOP_SIGNALS:
            loop.remove_signal_handler(signum)
    logger.info("worker %s stopped", executor.name)


@contextmanager
def _log_to_stderr(level: int, redactor: Redactor) -> Iterator[None]:
    """Send tarry's log records to standard error for the duration of the command, with the
    deployment's secrets masked."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(_LOG_FORMAT))
    handler.addFilter(RedactingFilter(redactor))
    root = logging.getLogger("tarry")
    previous = root.level
    root.addHandler(handler)
    root.setLevel(level)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)

"""Running the app on uvicorn until SIGTERM or SIGINT, ending with exit status 0."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.types import ASGIApp

__all__ = ["run_until_stopped"]

_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_LOOP = "tarry.eventloop:new_event_loop"
"""uvicorn's loop factory, by import path (:func:`tarry.eventloop.new_event_loop`)."""


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


def run_until_stopped(app: ASGIApp, host: str, port: int) -> None:
    """Serve ``app`` on ``host:port`` until a stop signal; requests in progress finish first
    (for up to 30 s). The loop is :func:`tarry.eventloop.new_event_loop`: the worker that
    shares it wakes runs on time."""
    config = uvicorn.Config(app, host=host, port=port, log_config=None, access_log=False,
                            server_header=False, timeout_graceful_shutdown=30,
                            loop=_LOOP)
    _Server(config).run()

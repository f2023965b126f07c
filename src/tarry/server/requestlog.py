"""One log line per request ``tarry serve`` answers, on the logger ``tarry.server.requests``.

Each line's fields are the method, the path (never the query string), the status, the
duration in milliseconds and the principal who made the request (null when the request
named none, such as a signed webhook or a health probe). Never a header, a token or a body.
With ``--log-format json`` the fields are keys of the line's JSON object
(:class:`~tarry.server.logs.JsonFormatter`); in text they are the message.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["REQUEST_LOGGER", "RequestLog", "note_principal"]

REQUEST_LOGGER = "tarry.server.requests"
"""The name of the logger of the request lines."""

logger = logging.getLogger(REQUEST_LOGGER)

_PRINCIPAL = "principal"


def note_principal(request: Request, principal: str | None) -> None:
    """Tell the request's log line who made it (the authentication that found out calls
    this)."""
    setattr(request.state, _PRINCIPAL, principal)


class RequestLog:
    """ASGI middleware writing the request line once the response has been sent (or the
    application failed: then with status 500)."""

    def __init__(self, app: ASGIApp,
                 monotonic: Callable[[], float] = time.perf_counter) -> None:
        self.app = app
        self._monotonic = monotonic

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request, then log it."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = self._monotonic()
        state: dict[str, Any] = scope.setdefault("state", {})
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            fields = {"method": scope["method"], "path": scope["path"], "status": status,
                      "duration_ms": round((self._monotonic() - started) * 1000, 3),
                      "principal": state.get(_PRINCIPAL)}
            logger.info("%s %s %d %.1f ms %s", fields["method"], fields["path"], status,
                        fields["duration_ms"], fields["principal"] or "-",
                        extra={"fields": fields})

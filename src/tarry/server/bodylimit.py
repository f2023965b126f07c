"""No request body larger than ``[limits] request_bytes`` is read.

A request whose ``Content-Length`` says it is too large is answered 413 before a byte of its
body is read; one without a length (chunked) is read only up to the limit, then refused the
same way. The check sits in front of everything else, authentication included, so no route
ever holds more than the limit in memory.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tarry.server.errors import error_response

__all__ = ["BodyLimit", "too_large_message"]


def too_large_message(limit: int) -> str:
    """The message of a 413."""
    return (f"the request body is larger than the limit of {limit} bytes "
            "([limits] request_bytes)")


class _TooLarge(HTTPException):
    """Raised from inside the body stream: the routes' error handling answers it as 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, too_large_message(limit), {"Connection": "close"})


class BodyLimit:
    """ASGI middleware refusing request bodies over ``limit`` bytes with 413."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, or answer 413 when its body is too large."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.limit:
            await self._refuse(scope, receive, send)
            return
        await self.app(scope, self._counting(receive), send)

    def _counting(self, receive: Receive) -> Receive:
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge(self.limit)
            return message

        return counted

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(413, too_large_message(self.limit),
                                  {"limit_bytes": self.limit}, {"Connection": "close"})
        await response(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None

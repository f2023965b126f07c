"""One error shape for every refusal of the HTTP API.

Every error response, whatever raised it, is::

    {"error": {"type": "not_found", "message": "no run with id 'r1'", "details": {}}}

``type`` is one of :data:`ERROR_TYPES` (one per status code), ``message`` a sentence a person
can act on, ``details`` structured fields a program can read (validation errors, the
quarantined event). A 503 carries ``Retry-After``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from tarry.errors import (
    Conflict,
    Forbidden,
    InvalidRequest,
    InvalidValue,
    NotFound,
    StoreUnavailable,
    TarryError,
    ValueTooLarge,
)
from tarry.server.auth import Unauthorized

__all__ = ["ERROR_TYPES", "ApiError", "ErrorBody", "ErrorInfo", "error_response",
           "install_error_handlers"]

logger = logging.getLogger("tarry.server")

ERROR_TYPES: Mapping[int, str] = {
    400: "malformed",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    422: "invalid",
    500: "internal",
    503: "unavailable",
}
"""The error ``type`` of each status code."""

RETRY_AFTER_SECONDS = 5
"""What a 503's ``Retry-After`` asks a client to wait."""

_STATUS_OF: tuple[tuple[type[TarryError], int], ...] = (
    (NotFound, 404),
    (Conflict, 409),
    (Forbidden, 403),
    (InvalidRequest, 422),
    (StoreUnavailable, 503),
    (ValueTooLarge, 413),
    (InvalidValue, 422),
)
"""The status of each API base of the tarry errors. A request that is well-formed but whose
content is refused (inputs a flow does not declare, a zone-less hold instant) is 422, like a
body that breaks its schema; 400 is for what cannot be read at all (not JSON, a bad cursor)."""


class ErrorInfo(BaseModel):
    """What went wrong."""

    type: str = Field(description="One of: " + ", ".join(sorted(set(ERROR_TYPES.values()))))
    message: str = Field(description="A sentence a person can act on.")
    details: dict[str, Any] = Field(default_factory=dict,
                                    description="Structured fields (validation errors, the "
                                                "quarantined event, …).")


class ErrorBody(BaseModel):
    """The body of every error response."""

    error: ErrorInfo


class ApiError(Exception):
    """An error response a route raises on purpose."""

    def __init__(self, status: int, message: str, *, details: Mapping[str, Any] | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        self.status = status
        self.message = message
        self.details = dict(details or {})
        self.headers = dict(headers or {})
        super().__init__(message)


def error_response(status: int, message: str, details: Mapping[str, Any] | None = None,
                   headers: Mapping[str, str] | None = None) -> JSONResponse:
    """The JSON response of one error."""
    body = ErrorBody(error=ErrorInfo(type=ERROR_TYPES.get(status, "error"), message=message,
                                     details=dict(details or {})))
    extra = dict(headers or {})
    if status == 503:
        extra.setdefault("Retry-After", str(RETRY_AFTER_SECONDS))
    if status == 401:
        extra.setdefault("WWW-Authenticate", 'Bearer realm="tarry"')
    return JSONResponse(body.model_dump(), status_code=status, headers=extra)


def status_of(exc: TarryError) -> int:
    """The HTTP status a tarry error answers with (422 for one the table does not name)."""
    return next((status for kind, status in _STATUS_OF if isinstance(exc, kind)), 422)


def install_error_handlers(app: FastAPI) -> None:
    """Answer every error raised while handling a request in the one shape."""
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(Unauthorized, _unauthorized)
    app.add_exception_handler(TarryError, _tarry_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(ClientDisconnect, _client_gone)
    app.add_exception_handler(Exception, _unexpected)


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.message, exc.details, exc.headers)


async def _unauthorized(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Unauthorized)
    return error_response(401, exc.message)


async def _tarry_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, TarryError)
    status = status_of(exc)
    if isinstance(exc, StoreUnavailable):
        logger.warning("store unavailable: %s", exc)
        retry = max(1, round(exc.retry_after))
        return error_response(503, "the store is unavailable right now; retry later",
                              {"retry_after": retry}, {"Retry-After": str(retry)})
    return error_response(status, _within_project(request, str(exc)), exc.details)


def _within_project(request: Request, message: str) -> str:
    """``message`` with the project's folder left out of the paths it names (a flow file
    that does not load is ``flows/x.yaml``): an error never shows where the server keeps
    its files."""
    settings = getattr(request.app.state, "settings", None)
    return message if settings is None else message.replace(f"{settings.root}{os.sep}", "")


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = [_problem(error) for error in exc.errors()]
    if any(error.get("type") == "json_invalid" for error in exc.errors()):
        return error_response(400, "the request body is not valid JSON",
                              {"errors": problems})
    summary = "; ".join(f"{p['where']}: {p['message']}" for p in problems[:5])
    return error_response(422, f"the request is invalid: {summary}", {"errors": problems})


def _problem(error: Mapping[str, Any]) -> dict[str, str]:
    where = ".".join(str(part) for part in error.get("loc", ()))
    return {"where": where, "message": str(error.get("msg", ""))}


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    message = {404: f"no such endpoint: {request.method} {request.url.path}",
               405: f"{request.method} is not allowed on {request.url.path}"}.get(
        exc.status_code, str(exc.detail))
    return error_response(exc.status_code, message, headers=exc.headers)


async def _client_gone(request: Request, exc: Exception) -> JSONResponse:
    """A client that hung up before sending its whole body (an aborted upload): one line in
    the log, no traceback, and an answer nobody reads."""
    logger.info("the client hung up before sending the whole body of %s %s",
                request.method, request.url.path)
    return error_response(400, "the request body was cut off: the client disconnected")


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    logger.exception("unexpected error handling %s %s", request.method, request.url.path)
    return error_response(500, "an internal error occurred; it has been logged")

"""What every dashboard page shares: its templates, who is looking (:class:`Viewer`), the
CSRF check of its forms, and :class:`DashboardRoute`, which turns a redirect or a refusal
into a page, sets the session cookie and the security headers.

A page asked for with the ``X-Tarry-Live`` header renders only its live part (the fragment
the page's script polls, so an open page follows the runs it shows).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from fastapi import Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.datastructures import FormData

from tarry.engine.runtime import Engine
from tarry.errors import (
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    StoreUnavailable,
    TarryError,
)
from tarry.server.dashboard import present
from tarry.server.dashboard.session import COOKIE, CSRF_FIELD, Session, Sessions
from tarry.server.requestlog import note_principal

__all__ = ["DashboardRoute", "PageError", "Redirect", "Viewer", "engine_of", "form_of",
           "form_text", "local_path", "page", "query_text", "viewer"]

LIVE_HEADER = "X-Tarry-Live"
"""A request with this header gets the page's live fragment only."""

_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                               "frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
"""Sent with every page: nothing from elsewhere loads, nothing frames a cancel button."""

_ERROR_STATUS: tuple[tuple[type[TarryError], int], ...] = (
    (NotFound, 404), (Conflict, 409), (Forbidden, 403), (InvalidRequest, 400),
    (StoreUnavailable, 503))
"""Which page status an engine error is shown with."""

templates = Environment(loader=PackageLoader("tarry.server.dashboard", "templates"),
                        autoescape=select_autoescape(default=True, default_for_string=True),
                        undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
templates.filters.update(instant=present.human_instant, json=present.pretty_json,
                         span=present.span_text, inline_json=present.inline_json)


class Redirect(Exception):
    """Answer with a redirect to ``location`` (303: the browser follows with a GET)."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.location = location


class PageError(Exception):
    """Answer with an error page: ``status``, a title and a message saying what to do."""

    def __init__(self, status: int, title: str, message: str) -> None:
        super().__init__(message)
        self.status, self.title, self.message = status, title, message


@dataclass(frozen=True)
class Viewer:
    """Who is looking at the page, and their session."""

    principal: str | None
    session: Session
    signs_in: bool
    """Whether this server has tokens (then there is a sign-in form and a sign-out button)."""


def engine_of(request: Request) -> Engine:
    """The server's engine."""
    engine: Engine = request.app.state.engine
    return engine


def _sessions(request: Request) -> Sessions:
    state = request.app.state
    sessions: Sessions | None = getattr(state, "dashboard_sessions", None)
    if sessions is None:
        sessions = state.dashboard_sessions = Sessions.for_settings(state.settings)
    return sessions


def start_session(request: Request, session: Session) -> None:
    """Send ``session`` as the browser's session cookie with this response."""
    request.state.dashboard_session = session


def end_session(request: Request, session: Session) -> None:
    """Revoke ``session`` (its cookie opens nothing here any more) and send the browser a
    fresh one, signed in as nobody."""
    _sessions(request).revoke(session)
    start_session(request, Session.fresh(None))


def current_session(request: Request) -> Session | None:
    """The session the request's cookie holds, if valid."""
    return _sessions(request).load(request.cookies.get(COOKIE))


def viewer(request: Request) -> Viewer:
    """Who is looking; sends the browser to the sign-in form when a token is needed and it
    has no session. A browser without a session gets one (it holds the CSRF token)."""
    principals = request.app.state.principals
    session = current_session(request)
    if principals.required and (session is None or session.principal not in principals.names):
        raise Redirect("/signin?next=" + quote(_here(request), safe="/"))
    if session is None:
        session = Session.fresh(principals.authenticate(None))
        start_session(request, session)
    note_principal(request, session.principal)
    return Viewer(session.principal, session, principals.required)


def _here(request: Request) -> str:
    query = request.url.query
    return request.url.path + (f"?{query}" if query else "")


def local_path(target: str | None, default: str) -> str:
    """``target`` if it is a path on this server (``/runs?…``), else ``default``: a link to
    elsewhere is never followed after a form."""
    if target and target.startswith("/") and not target.startswith(("//", "/\\")):
        return target
    return default


async def form_of(request: Request, who: Viewer) -> FormData:
    """The submitted form, once its CSRF token proved it came from ``who``'s page."""
    form = await request.form()
    token = form.get(CSRF_FIELD)
    if not who.session.accepts(token if isinstance(token, str) else None):
        raise PageError(403, "This form was refused",
                        "It did not carry this session's security token (it may come from "
                        "another site, or from a page opened before you signed in again). "
                        "Reload the page and submit it again.")
    return form


def page(request: Request, who: Viewer, name: str, *, live: str | None = None,
         status: int = 200, **context: Any) -> HTMLResponse:
    """Render template ``name`` (or, for a live request, its fragment ``live``)."""
    template = live if live is not None and request.headers.get(LIVE_HEADER) else name
    values = {"request_path": _here(request), "viewer": who, "csrf_field": CSRF_FIELD,
              "now": engine_of(request).clock.now(), **context}
    return HTMLResponse(templates.get_template(template).render(values), status_code=status)


def error_page(status: int, title: str, message: str, who: Viewer | None,
               now: datetime) -> HTMLResponse:
    """An error as a page of the dashboard."""
    body = templates.get_template("error.html").render(
        title=title, message=message, viewer=who, csrf_field=CSRF_FIELD, now=now,
        request_path="")
    return HTMLResponse(body, status_code=status)


class DashboardRoute(APIRoute):
    """A dashboard route: redirects, refusals and engine errors become pages; the session
    cookie and the security headers go out with every answer."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """The route's handler, wrapped."""
        handle = super().get_route_handler()

        async def dashboard_handler(request: Request) -> Response:
            try:
                response = await handle(request)
            except Redirect as redirect:
                response = RedirectResponse(redirect.location, status_code=303)
            except PageError as refused:
                response = _error_response(request, refused.status, refused.title,
                                           refused.message)
            except TarryError as error:
                status = next((code for kind, code in _ERROR_STATUS
                               if isinstance(error, kind)), 500)
                response = _error_response(request, status, "That did not work", str(error))
            _finish(request, response)
            return response

        return dashboard_handler


def _error_response(request: Request, status: int, title: str, message: str) -> Response:
    session = current_session(request)
    principals = request.app.state.principals
    who = (Viewer(session.principal, session, principals.required)
           if session is not None and session.principal is not None else None)
    return error_page(status, title, message, who, engine_of(request).clock.now())


def _finish(request: Request, response: Response) -> None:
    session: Session | None = getattr(request.state, "dashboard_session", None)
    if session is not None:
        sessions = _sessions(request)
        response.set_cookie(COOKIE, sessions.dump(session), max_age=sessions.max_age,
                            httponly=True, samesite="lax", path="/",
                            secure=request.url.scheme == "https")
    for name, value in _SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)


def form_text(form: Mapping[str, Any], name: str) -> str | None:
    """A text field of a submitted form, None when absent or blank."""
    value = form.get(name)
    return (value.strip() or None) if isinstance(value, str) else None


def query_text(params: Mapping[str, str], name: str) -> str | None:
    """A query parameter, None when absent or blank."""
    value = params.get(name, "").strip()
    return value or None

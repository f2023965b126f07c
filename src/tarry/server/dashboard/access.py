"""Signing in to the dashboard with a token, and signing out (see :mod:`.session`)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from tarry.server.dashboard.session import Session
from tarry.server.dashboard.web import (
    DashboardRoute,
    Redirect,
    Viewer,
    current_session,
    end_session,
    form_of,
    local_path,
    page,
    start_session,
)

__all__ = ["router"]

router = APIRouter(route_class=DashboardRoute)


def _visitor(request: Request) -> Viewer:
    """The browser at the sign-in form: its session (a new one, not signed in, if none)."""
    session = current_session(request)
    if session is None:
        session = Session.fresh(None)
        start_session(request, session)
    return Viewer(session.principal, session, request.app.state.principals.required)


@router.get("/signin", response_class=HTMLResponse)
async def signin_form(request: Request) -> HTMLResponse:
    """The sign-in form (a server without tokens has none: it goes straight on)."""
    target = local_path(request.query_params.get("next"), "/runs")
    if not request.app.state.principals.required:
        raise Redirect(target)
    return page(request, _visitor(request), "signin.html", target=target, problem=None)


@router.post("/signin", response_class=HTMLResponse)
async def signin(request: Request) -> HTMLResponse:
    """Check the token; a valid one starts a session for its principal (with a new CSRF
    token), an invalid one shows the form again."""
    visitor = _visitor(request)
    form = await form_of(request, visitor)
    next_value, token = form.get("next"), form.get("token")
    target = local_path(next_value if isinstance(next_value, str) else None, "/runs")
    principals = request.app.state.principals
    if not principals.required:
        raise Redirect(target)
    principal = principals.authenticate(token.strip() if isinstance(token, str) else None)
    if principal is None:
        return page(request, visitor, "signin.html", status=401, target=target,
                    problem="That token is not valid here. Use the value of TARRY_API_TOKEN, "
                            "or your own token from TARRY_API_TOKENS.")
    start_session(request, Session.fresh(principal))
    raise Redirect(target)


@router.post("/signout")
async def signout(request: Request) -> HTMLResponse:
    """End the session (its CSRF token too; a copy of its cookie opens nothing any more) and
    go back to the sign-in form."""
    visitor = _visitor(request)
    await form_of(request, visitor)
    end_session(request, visitor.session)
    raise Redirect("/signin")

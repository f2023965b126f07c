"""Signing in to the dashboard with a token (SPEC 8.2): a session cookie for the token's
principal, CSRF tokens on the forms, and nothing shown to a browser without a session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from dashboard_support import Browser, csrf_of, settled, write_dashboard_project
from server_support import Served, serve

from tarry.model import RunStatus
from tarry.server.dashboard.session import COOKIE

TOKENS = {"TARRY_API_TOKEN": "single-secret", "TARRY_API_TOKENS": "alice=alice-secret"}


@pytest.fixture
def guarded(tmp_path: Path, store_url: str) -> Iterator[Served]:
    """The dashboard's test project served with a single token and a named principal."""
    with serve(write_dashboard_project(tmp_path / "project", store_url), TOKENS) as served:
        yield served


@pytest.fixture
def browser(guarded: Served) -> Iterator[Browser]:
    """A browser-like client, not signed in."""
    with Browser(guarded) as client:
        yield client


@pytest.mark.parametrize("path", ["/runs", "/runs/abc", "/held", "/events", "/events/x",
                                  "/tasks", "/flows"])
def test_a_page_sends_a_browser_without_a_session_to_the_sign_in_form(
        browser: Browser, path: str) -> None:
    response = browser.get(path)
    assert (response.status_code, response.headers["location"]) == (
        303, f"/signin?next={path}")


def test_the_sign_in_form_keeps_where_the_browser_was_going(browser: Browser) -> None:
    response = browser.get("/runs?status=held")
    assert response.headers["location"] == "/signin?next=/runs%3Fstatus%3Dheld"
    form = browser.get(response.headers["location"]).text
    assert '<input type="hidden" name="next" value="/runs?status=held">' in form
    assert 'type="password"' in form


@pytest.mark.parametrize(("token", "principal"), [("single-secret", "api"),
                                                  ("alice-secret", "alice")])
def test_a_valid_token_signs_in_as_its_principal(browser: Browser, token: str,
                                                 principal: str) -> None:
    response = browser.sign_in(token)

    assert (response.status_code, response.headers["location"]) == (303, "/runs")
    page = browser.get("/runs")
    assert page.status_code == 200
    assert f"signed in as <b>{principal}</b>" in page.text


def test_the_session_cookie_is_http_only_and_same_site(browser: Browser) -> None:
    response = browser.sign_in("alice-secret")
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=")
    assert "HttpOnly" in cookie
    assert "SameSite=lax" in cookie
    assert "alice-secret" not in cookie


@pytest.mark.parametrize("token", ["wrong", "", "alice-secret "[:-2]])
def test_a_wrong_token_shows_the_form_again_with_the_reason(browser: Browser,
                                                            token: str) -> None:
    response = browser.sign_in(token)
    assert response.status_code == 401
    assert "That token is not valid here." in response.text
    assert browser.get("/runs").status_code == 303


def test_signing_in_without_the_forms_csrf_token_is_refused(browser: Browser) -> None:
    browser.get("/signin")
    response = browser.http.post("/signin", data={"token": "alice-secret"})
    assert response.status_code == 403
    assert browser.get("/runs").status_code == 303


def test_a_forged_session_cookie_counts_for_nothing(guarded: Served) -> None:
    with Browser(guarded) as browser:
        browser.http.cookies.set(COOKIE, "eyJwIjoiYWxpY2UiLCJjIjoieCJ9.forged.signature")
        assert browser.get("/runs").status_code == 303


def test_a_cancel_is_recorded_as_the_signed_in_principal(guarded: Served,
                                                         browser: Browser) -> None:
    run = guarded.engine.start("nap")
    settled(guarded.engine, [run], RunStatus.WAITING)
    browser.sign_in("alice-secret")

    response = browser.submit(f"/runs/{run.id}/cancel", f"/runs/{run.id}/cancel")

    assert response.status_code == 303
    assert guarded.engine.store.get_run(run.id).cancelled_by == "alice"


def test_signing_in_again_gives_a_new_csrf_token(browser: Browser) -> None:
    before = csrf_of(browser.get("/signin").text)
    browser.sign_in("alice-secret")
    after = csrf_of(browser.get("/runs").text)
    assert before != after


def test_signing_out_ends_the_session(browser: Browser) -> None:
    browser.sign_in("alice-secret")
    response = browser.submit("/runs", "/signout")
    assert (response.status_code, response.headers["location"]) == (303, "/signin")
    assert browser.get("/runs").status_code == 303


def test_a_copy_of_the_cookie_kept_from_before_signing_out_opens_nothing(
        browser: Browser, guarded: Served) -> None:
    browser.sign_in("alice-secret")
    kept = browser.http.cookies[COOKIE]
    assert browser.submit("/runs", "/signout").status_code == 303
    with httpx.Client(base_url=guarded.url, cookies={COOKIE: kept},
                      follow_redirects=False) as replay:
        response = replay.get("/runs")
    assert (response.status_code, response.headers["location"]) == (303, "/signin?next=/runs")


def test_after_signing_in_only_a_path_on_this_server_is_followed(browser: Browser) -> None:
    response = browser.submit("/signin", "/signin", token="alice-secret",
                              next="https://elsewhere.example/")
    assert response.headers["location"] == "/runs"


def test_a_bearer_token_does_not_open_the_dashboard(guarded: Served) -> None:
    with guarded.client("alice-secret") as client:
        response = client.get("/runs", follow_redirects=False)
    assert response.status_code == 303


def test_without_tokens_the_sign_in_form_goes_straight_on(tmp_path: Path,
                                                          store_url: str) -> None:
    with serve(write_dashboard_project(tmp_path / "p", store_url)) as open_server, \
            Browser(open_server) as browser:
        response = browser.get("/signin?next=/held")
        assert (response.status_code, response.headers["location"]) == (303, "/held")
        assert "Sign out" not in browser.get("/runs").text

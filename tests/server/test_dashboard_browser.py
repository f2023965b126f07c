"""The dashboard in a real browser (headless Chromium), against ``tarry serve``'s app on a
real socket, on each store: what an operator does, start to end, and screenshots of the main
pages (``test-artifacts/``) to judge how they read on a laptop screen."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_support import (
    LIVE_WAIT_MS,
    Scene,
    eventually,
    sign_in_tab,
    stage,
    write_dashboard_project,
)
from server_support import Served, serve

from browsers import Tab
from tarry.model import EventState, RunStatus

TOKEN = "operator-secret"


@pytest.fixture
def dashboard(tmp_path: Path, store_url: str) -> Iterator[Served]:
    """The dashboard's test project served with a token, as ``tarry serve`` runs it."""
    project = write_dashboard_project(tmp_path / "project", store_url)
    with serve(project, {"TARRY_API_TOKENS": f"ops={TOKEN}"}) as served:
        yield served


@pytest.fixture
def scene(dashboard: Served) -> Scene:
    """The runs and the quarantined event, staged."""
    return stage(dashboard)


def _sign_in(tab: Tab, dashboard: Served) -> None:
    sign_in_tab(tab, dashboard, TOKEN, shot="signin")
    assert "signed in as ops" in tab.page.inner_text("header.top")


def test_an_operator_finds_a_waiting_run_by_what_it_waits_for_and_cancels_it(
        tab: Tab, dashboard: Served, scene: Scene) -> None:
    page = tab.page
    _sign_in(tab, dashboard)
    tab.screenshot("runs")

    page.select_option("select[name=waiting_for]", "timer")
    page.click("button:has-text('Filter')")
    page.wait_for_url(re.compile(r".*waiting_for=timer.*"))
    rows = page.locator("table.runs tbody tr")
    assert rows.count() == 1
    assert re.match(r"timer at step 'nap' · until \d{4}-\d\d-\d\d .* UTC \(in 1d 23h\)",
                    rows.locator("td.line").inner_text())

    rows.locator("a").first.click()
    page.wait_for_url(f"{dashboard.url}/runs/{scene.nap.id}")
    assert page.inner_text("#explanation").startswith(
        "waiting for timer at step 'nap' since ")
    span = page.locator("g.span[data-kind=timer]")
    assert span.locator("rect.planned").is_visible()
    assert span.locator("rect.waited").is_visible()
    assert page.locator("line.deadline").count() == 1
    tab.screenshot("run-timer")

    page.click("text=Cancel run…")
    assert page.inner_text("h1") == "Cancel this run?"
    tab.screenshot("cancel-confirmation")
    assert dashboard.engine.store.get_run(scene.nap.id).status is RunStatus.WAITING
    page.click("text=Yes, cancel the run")
    page.wait_for_url(f"{dashboard.url}/runs/{scene.nap.id}")
    assert page.inner_text(".run-head .status") == "cancelled"
    record = dashboard.engine.store.get_run(scene.nap.id)
    assert (record.status, record.cancelled_by) == (RunStatus.CANCELLED, "ops")


def test_an_operator_redelivers_a_quarantined_event_with_a_corrected_payload(
        tab: Tab, dashboard: Served, scene: Scene) -> None:
    page = tab.page
    _sign_in(tab, dashboard)
    page.click("header.top >> text=Event inbox")
    row = page.locator(f"tr[data-event='{scene.quarantined.id}']")
    assert "approved: 'yes' is not of type 'boolean'" in row.inner_text()
    tab.screenshot("event-inbox")

    row.locator("a").click()
    assert page.input_value("#payload").replace(" ", "").replace("\n", "") == \
        '{"deal":"D1","approved":"yes"}'
    page.fill("#payload", '{"deal": "D1", "approved": true}')
    tab.screenshot("event-edit")
    page.click("button:has-text('Redeliver')")

    assert page.locator(".estate").first.inner_text() == "delivered"
    assert f"Delivered to {scene.approval.id}" in page.inner_text(".explain")
    assert dashboard.engine.store.get_event(scene.quarantined.id).state is EventState.DELIVERED
    page.click(f"a[href='/runs/{scene.approval.id}']")
    page.wait_for_selector(".run-head .s-succeeded", timeout=LIVE_WAIT_MS)
    assert page.locator("g.span[data-kind=event][data-outcome=received]").count() == 1
    assert page.locator("g.mark[data-mark=event]").count() == 1
    tab.screenshot("run-received")


def test_an_open_run_page_follows_the_run_without_a_reload(tab: Tab, dashboard: Served,
                                                           scene: Scene) -> None:
    page = tab.page
    _sign_in(tab, dashboard)
    page.goto(f"{dashboard.url}/runs/{scene.approval.id}")
    assert page.inner_text("#explanation").startswith(
        "waiting for event 'deal.approved' matching deal=\"D1\" at step 'approval' since ")
    assert page.locator("g.now").count() == 1
    tab.screenshot("run-waiting")

    dashboard.engine.send("deal.approved", {"deal": "D1", "approved": False})
    eventually(lambda: dashboard.engine.store.get_run(scene.approval.id).status
               is RunStatus.SUCCEEDED, "the run resumed")

    page.wait_for_selector(".run-head .s-succeeded", timeout=LIVE_WAIT_MS)
    assert page.url == f"{dashboard.url}/runs/{scene.approval.id}"
    assert page.locator("g.now").count() == 0  # an ended run has no present
    assert page.inner_text("#live-state").startswith("updated ")


def test_an_operator_sees_a_held_run_and_what_holds_it(tab: Tab, dashboard: Served,
                                                       scene: Scene) -> None:
    page = tab.page
    _sign_in(tab, dashboard)
    page.click("header.top >> text=Held")
    row = page.locator(f"tr[data-run='{scene.deploy.id}']")
    text = row.inner_text()
    assert "acme/web#7" in text
    assert "check ticket not yet clear" in text
    assert "ticket: 1 in a row" in text
    tab.screenshot("held")

    row.locator("a.button").click()
    page.click("text=Yes, cancel the run")
    page.wait_for_url(f"{dashboard.url}/held")
    assert page.inner_text(".empty") == "No run is held."

"""Operating runs from the dashboard in a real browser (headless Chromium), against the
served app on a real socket, on each store: retry a failed run with corrected inputs, rerun
it, cancel a run with a reason, and cancel every run a filter selects."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_support import eventually, sign_in_tab
from server_support import Served, serve, write_project

from browsers import Tab
from operate_support import FLAKY_FLOW
from tarry.model import RunStatus

TOKEN = "operator-secret"


NAP_FLOW = """\
flow: nap
steps:
  - nap:
      wait: { for: 2d }
"""


@pytest.fixture
def dashboard(tmp_path: Path, store_url: str) -> Iterator[Served]:
    project = write_project(tmp_path / "project", store_url,
                            flows={"flaky": FLAKY_FLOW, "nap": NAP_FLOW})
    with serve(project, {"TARRY_API_TOKENS": f"ops={TOKEN}"}) as served:
        yield served


def _failed(dashboard: Served) -> str:
    run_id = dashboard.engine.start("flaky").id
    eventually(lambda: dashboard.engine.store.get_run(run_id).status is RunStatus.FAILED,
               "the flaky run failed")
    return run_id


def _history(dashboard: Served, run_id: str, kind: str) -> list[dict[str, object]]:
    return [entry.data for entry in dashboard.engine.store.history(run_id) if entry.kind == kind]


def test_an_operator_retries_a_failed_run_with_corrected_inputs_then_reruns_it(
        tab: Tab, dashboard: Served) -> None:
    run_id = _failed(dashboard)
    page = tab.page
    sign_in_tab(tab, dashboard, TOKEN, path=f"/runs/{run_id}")
    assert page.inner_text(".run-head .status") == "failed"
    assert page.locator("#retry").is_visible()
    tab.screenshot("failed-run")

    page.click("#retry")
    assert page.inner_text("h1") == "Retry this run?"
    assert "Failed at step check: not fine yet" in page.inner_text(".confirm")
    assert json.loads(page.input_value("textarea[name=inputs]")) == {"fine": False}
    page.fill("input[name=reason]", "the input was wrong")
    page.fill("textarea[name=inputs]", '{"fine": true}')
    tab.screenshot("retry-confirmation")
    page.click("text=Yes, retry the run")
    page.wait_for_url(f"{dashboard.url}/runs/{run_id}")

    eventually(lambda: dashboard.engine.store.get_run(run_id).status is RunStatus.SUCCEEDED,
               "the retried run succeeded")
    page.reload()
    assert page.inner_text(".run-head .status") == "succeeded"
    assert page.inner_text("#attempt") == "2"
    assert 'reason="the input was wrong"' in page.inner_text("table.history")
    assert _history(dashboard, run_id, "retried") == [
        {"by": "ops", "reason": "the input was wrong", "inputs": ["fine"]}]
    assert len(_history(dashboard, run_id, "log")) == 1  # the first step ran once

    page.click("#rerun")
    page.wait_for_url(re.compile(rf"{re.escape(dashboard.url)}/runs/(?!{run_id})[0-9a-f]{{32}}"))
    rerun_id = page.url.rsplit("/", 1)[1]
    assert page.inner_text("#rerun-of") == run_id[:12]
    assert dashboard.engine.store.get_run(rerun_id).inputs == {"fine": True}
    page.click("#rerun-of")
    page.wait_for_url(f"{dashboard.url}/runs/{run_id}")
    assert page.inner_text("#reruns") == rerun_id[:12]


def test_retry_is_offered_only_for_a_failed_run(tab: Tab, dashboard: Served) -> None:
    run_id = dashboard.engine.start("nap").id
    sign_in_tab(tab, dashboard, TOKEN, path=f"/runs/{run_id}")
    assert tab.page.locator("#retry").count() == 0
    response = tab.page.goto(f"{dashboard.url}/runs/{run_id}/retry")
    assert response is not None
    assert response.status == 409
    assert "Only a failed run can be retried" in tab.page.inner_text("main")


def test_an_operator_cancels_a_run_with_a_reason(tab: Tab, dashboard: Served) -> None:
    run_id = dashboard.engine.start("nap").id
    page = tab.page
    sign_in_tab(tab, dashboard, TOKEN, path=f"/runs/{run_id}")
    tab.screenshot("waiting-run")
    page.click("text=Cancel run…")
    page.fill("input[name=reason]", "the customer withdrew")
    page.click("text=Yes, cancel the run")
    page.wait_for_url(f"{dashboard.url}/runs/{run_id}")
    assert page.inner_text(".run-head .status") == "cancelled"
    assert 'reason="the customer withdrew"' in page.inner_text("table.history")
    assert _history(dashboard, run_id, "cancelled") == [
        {"by": "ops", "reason": "the customer withdrew"}]


def test_an_operator_cancels_every_run_a_filter_selects(tab: Tab, dashboard: Served) -> None:
    selected = [dashboard.engine.start("nap", target="eu").id for _ in range(3)]
    other = dashboard.engine.start("nap", target="us").id
    page = tab.page
    sign_in_tab(tab, dashboard, TOKEN, path="/runs?target=eu")

    page.click("#bulk-cancel")
    assert page.inner_text("h1") == "Cancel 3 runs?"
    assert "selects 3 runs that can be cancelled" in page.inner_text("#bulk-count")
    page.fill("input[name=reason]", "region drill")
    tab.screenshot("bulk-cancel-confirmation")
    page.click("text=Yes, cancel 3 runs")
    page.wait_for_url(re.compile(rf"{re.escape(dashboard.url)}/batches/[0-9a-f]{{32}}"))

    eventually(lambda: all(dashboard.engine.store.get_run(run).status is RunStatus.CANCELLED
                           for run in selected), "the selected runs were cancelled")
    page.reload()
    assert page.inner_text("#batch-state") == "done"
    assert (page.inner_text("#batch-total"), page.inner_text("#batch-acted")) == ("3", "3")
    tab.screenshot("batch")
    assert dashboard.engine.store.get_run(other).status is not RunStatus.CANCELLED
    assert _history(dashboard, selected[0], "cancelled") == [
        {"by": "ops", "reason": "region drill"}]

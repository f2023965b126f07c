"""Pacing seen where operators look, on each store, over a real socket: a throttled run's
wait in the dashboard (headless Chromium) and the API, a debounced trigger's pending burst
in ``GET /v1/flows`` and on the Flows page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_support import eventually, sign_in_tab
from server_support import Served, serve

from browsers import Tab
from tarry.model import RunStatus

TOKEN = "operator-secret"
REPORT = """\
flow: report
inputs:
  team: { type: string, required: true }
throttle: { key: "{{ team }}", limit: 1, per: 1h }
steps:
  - sent: { log: "report for {{ team }}" }
"""
BUILD = """\
flow: build
inputs:
  sha: { type: string, required: true }
on:
  - event: forge.push
    inputs: { sha: "{{ event.sha }}" }
    debounce: { key: "{{ event.repo }}", period: 1h }
steps:
  - built: { log: "built {{ sha }}" }
"""
EVENTS = "events:\n  forge.push:\n    correlate_on: [repo]\n"


@pytest.fixture
def served(tmp_path: Path, store_url: str) -> Iterator[Served]:
    root = tmp_path / "project"
    (root / "flows").mkdir(parents=True)
    (root / "flows" / "report.yaml").write_text(REPORT)
    (root / "flows" / "build.yaml").write_text(BUILD)
    (root / "events.yaml").write_text(EVENTS)
    (root / "tarry.toml").write_text(f'[tarry]\ndatabase = "{store_url}"\n')
    with serve(root, {"TARRY_API_TOKENS": f"ops={TOKEN}"}) as running:
        yield running


def test_a_throttled_run_is_found_by_its_wait_and_explained(tab: Tab, served: Served) -> None:
    engine = served.engine
    first, second = (engine.start("report", {"team": "ops"}) for _ in range(2))
    eventually(lambda: engine.store.get_run(second.id).status is RunStatus.WAITING
               and engine.store.get_run(first.id).status is RunStatus.SUCCEEDED,
               "the first report ran and the second waits for its turn")
    with served.client(TOKEN) as client:
        [listed] = client.get("/v1/runs", params={"waiting_for": "throttle"}).json()["runs"]
        assert listed["id"] == second.id
        assert listed["waiting_for"]["kind"] == "throttle"
        assert listed["waiting_for"]["key"] == "ops"

    page = tab.page
    sign_in_tab(tab, served, TOKEN)
    page.select_option("select[name=waiting_for]", "throttle")
    page.click("button:has-text('Filter')")
    page.wait_for_url(re.compile(r".*waiting_for=throttle.*"))
    rows = page.locator("table.runs tbody tr")
    assert rows.count() == 1
    assert re.match(r"throttle 'ops': its turn to start · starts at \d{4}-\d\d-\d\d .* UTC "
                    r"\(in (59m|1h)", rows.locator("td.line").inner_text())
    rows.locator("a").first.click()
    page.wait_for_url(f"{served.url}/runs/{second.id}")
    assert page.inner_text("#explanation").startswith(
        "waiting for its turn to start with key 'ops' (throttle: at most 1 starts per 1h) "
        "since ")
    assert page.locator("g.span[data-kind=throttle] rect.planned").is_visible()
    tab.screenshot("run-throttled")


def test_a_pending_burst_is_listed_with_its_trigger(served: Served) -> None:
    with served.client(TOKEN) as client:
        for sha in ("a1", "b2"):
            sent = client.post("/v1/events/forge.push",
                               json={"data": {"repo": "acme/web", "sha": sha}})
            assert sent.status_code == 202, sent.text
        [run_id] = set(sent.json()["started"])
        flows = {flow["name"]: flow for flow in client.get("/v1/flows").json()["flows"]}
        [trigger] = flows["build"]["triggers"]
        [burst] = trigger["debounce"]["pending"]
        assert (burst["key"], burst["run"], burst["events"]) == ("acme/web", run_id, 2)
        run = client.get(f"/v1/runs/{run_id}").json()
        assert (run["status"], run["inputs"]) == ("pending", {"sha": "b2"})

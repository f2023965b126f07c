"""A flow drawn in a real browser (headless Chromium), on each store: the external-wait
showcase with the runs waiting at its steps, a 200-step flow, and a run's path. Screenshots go
to the test run's artifacts."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_support import Served, eventually, serve

from browsers import Tab
from graph_support import EXAMPLES, long_flow_text
from tarry.graph import diagram_of
from tarry.model import RunStatus

REQUEST = {"number": "Q-{n}", "party": "acme", "owner": "sam", "reviewer": "kim"}


@pytest.fixture
def showcase(tmp_path: Path, store_url: str) -> Iterator[Served]:
    """The external-wait example on the test's store, with a 200-step flow beside it."""
    project = tmp_path / "external-wait"
    shutil.copytree(EXAMPLES / "external-wait", project,
                    ignore=shutil.ignore_patterns(".tarry", "__pycache__"))
    config = project / "tarry.toml"
    config.write_text(re.sub(r'database = "[^"]*"', f'database = "{store_url}"',
                             config.read_text()))
    (project / "flows" / "long.yaml").write_text(long_flow_text(200))
    with serve(project) as served:
        yield served


def _started(served: Served, runs: int) -> list[str]:
    ids = [served.engine.start("reply-review", {"request": {**REQUEST, "number": f"Q-{n}"}}).id
           for n in range(runs)]
    assert eventually(lambda: served.engine.store.count_runs_per_step("reply-review")
                      .get("reply", {}).get(RunStatus.WAITING) == runs)
    return ids


SCREEN = {"width": 1280, "height": 800}
"""The narrowest laptop screen the drawings must fit across."""


@pytest.fixture
def screen(tab: Tab) -> Tab:
    """The tab on a 1,280 px wide screen."""
    tab.page.set_viewport_size(SCREEN)  # type: ignore[arg-type]
    return tab


def _fits_the_screen(tab: Tab) -> None:
    widest = tab.page.evaluate("document.documentElement.scrollWidth")
    assert widest <= SCREEN["width"]


def test_the_showcase_shows_its_shape_and_the_runs_waiting_at_its_reply(
        screen: Tab, showcase: Served) -> None:
    _started(showcase, 3)
    page = screen.page
    page.goto(f"{showcase.url}/flows/reply-review")
    drawing = page.locator("svg.flow-graph")
    assert drawing.count() == 1
    nodes = page.locator("svg.flow-graph g.node")
    flow = showcase.engine.catalog.find("reply-review")
    assert nodes.count() == len(list(diagram_of(flow).nodes()))
    for step in ("reply: event counterpart.reply", "review: task for a person",
                 "escalated: exit escalated", "remind every 1d, at most 3"):
        assert page.locator("svg.flow-graph text", has_text=step).count() >= 1, step
    waiting = page.locator("g.node[data-node='reply'] text.count.status-waiting")
    assert waiting.text_content() == "3 waiting"
    _fits_the_screen(screen)
    screen.screenshot("reply-review")

    waiting.click()
    page.wait_for_url(re.compile(r".*/runs\?.*at_step=reply.*"))
    assert page.locator("table.runs tbody tr").count() == 3


def test_a_200_step_flow_scrolls_down_and_stays_within_the_screen(
        screen: Tab, showcase: Served) -> None:
    page = screen.page
    page.goto(f"{showcase.url}/flows/long")
    nodes = page.locator("svg.flow-graph g.node")
    assert nodes.count() == 180  # its groups and repeats folded: the top-level steps
    assert page.locator("g.node[data-node='g0'] text", has_text="▸ 2 steps inside").count() == 1
    _fits_the_screen(screen)
    screen.screenshot("long-folded")
    page.click("#unfold")
    page.wait_for_url(re.compile(r".*fold=none"))
    assert nodes.count() == 210
    _fits_the_screen(screen)
    screen.screenshot("long")


def test_a_runs_page_draws_its_path_done_and_where_it_is_now(
        screen: Tab, showcase: Served) -> None:
    (run_id,) = _started(showcase, 1)
    screen.page.goto(f"{showcase.url}/runs/{run_id}")
    path = screen.page.locator("section[aria-label=path] svg.flow-graph")
    assert "state-done" in (path.locator("g.node[data-node='sent']").get_attribute("class")
                            or "")
    assert "state-here" in (path.locator("g.node[data-node='reply']").get_attribute("class")
                            or "")
    assert path.locator("g.node[data-node='escalate']").get_attribute("class") == (
        "node kind-action")
    _fits_the_screen(screen)
    screen.screenshot("run-path")


@pytest.mark.parametrize("flow", ["claim-documents", "customs-clearance", "freight-quote",
                                  "po-confirmation", "supplier-attestations"])
def test_every_other_example_flow_draws_within_the_screen(screen: Tab, showcase: Served,
                                                           flow: str) -> None:
    screen.page.goto(f"{showcase.url}/flows/{flow}")
    drawn = screen.page.locator("svg.flow-graph g.node")
    assert drawn.count() == len(list(diagram_of(showcase.engine.catalog.find(flow)).nodes()))
    _fits_the_screen(screen)
    screen.screenshot(flow)

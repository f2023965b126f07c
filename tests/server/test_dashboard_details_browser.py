"""A run's history details in real Chromium: written as the run recorded them (an apostrophe
is ``'``, never ``\\u0027``), and wrapped within a laptop's screen however long they are."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_support import settled, sign_in_tab, write_dashboard_project
from server_support import Served, serve

from browsers import Tab
from tarry.model import RunStatus

TOKEN = "operator-secret"

LONG_KEY = "nope_" + "x" * 300
BROKEN_FLOW = f"""\
flow: broken
inputs:
  who: {{ type: string, required: true }}
steps:
  - oops:
      set: {{ x: "{{{{ who.{LONG_KEY} }}}}" }}
"""
"""A flow whose one step fails with a long message full of apostrophes."""

SCREEN = {"width": 1280, "height": 800}

OVERFLOWING = """() => {
  const width = document.documentElement.clientWidth;
  return [...document.querySelectorAll("body *")]
    .filter((element) => element.getBoundingClientRect().right > width + 0.5)
    .map((element) => element.tagName.toLowerCase() + "." + element.className);
}"""
"""The elements that reach past the right edge of the viewport."""


@pytest.fixture
def dashboard(tmp_path: Path, store_url: str) -> Iterator[Served]:
    """The dashboard's project, with the broken flow, served with a token."""
    project = write_dashboard_project(tmp_path / "project", store_url)
    (project / "flows" / "broken.yaml").write_text(BROKEN_FLOW)
    with serve(project, {"TARRY_API_TOKENS": f"ops={TOKEN}"}) as served:
        yield served


def test_a_long_detail_with_apostrophes_reads_as_written_and_wraps(
        tab: Tab, dashboard: Served) -> None:
    run = dashboard.engine.start("broken", {"who": "it's me"})
    settled(dashboard.engine, [run], RunStatus.FAILED)
    tab.page.set_viewport_size(SCREEN)
    sign_in_tab(tab, dashboard, TOKEN, path=f"/runs/{run.id}")

    failed = tab.page.locator("table.history tr.k-step-failed td.data").inner_text()
    assert f"cannot read key '{LONG_KEY[:40]}" in failed  # the key's excerpt
    assert f"' of 'who': it is a str: {{{{ who.{LONG_KEY} }}}}" in failed
    assert "\\u0027" not in tab.page.content()
    tab.screenshot("run-long-details")
    assert tab.page.evaluate(OVERFLOWING) == []
    assert tab.page.evaluate("document.documentElement.scrollWidth") <= SCREEN["width"]
    tab.screenshot("run-long-details")

"""Child flows served, on every store: the run document links a parent and its children both
ways over a real socket (``parent``, ``children``, a child wait's ``run``), cancelling the
parent over the API cancels its children, and the dashboard's run page links them both ways
in a real browser (headless Chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_support import eventually, sign_in_tab
from server_support import Served, serve, status_becomes, write_project

from browsers import Tab

TOKEN = "operator-secret"

SLEEPY = """\
flow: sleepy
steps:
  - nap:
      wait: { for: 2d }
"""

PARENT = """\
flow: parent
steps:
  - kid:
      call: { flow: sleepy }
"""


@pytest.fixture
def served(tmp_path: Path, store_url: str) -> Iterator[Served]:
    project = write_project(tmp_path / "project", store_url,
                            flows={"sleepy": SLEEPY, "parent": PARENT})
    with serve(project, {"TARRY_API_TOKENS": f"ops={TOKEN}"}) as server:
        yield server


def _child_of(served: Served, run_id: str) -> str:
    eventually(lambda: bool(served.engine.store.children(run_id)), "the child started")
    [child] = served.engine.store.children(run_id)
    return child


def test_the_run_documents_link_parent_and_child_and_cancel_cascades(served: Served) -> None:
    run_id = served.engine.start("parent").id
    child = _child_of(served, run_id)
    with served.client(token=TOKEN) as client:
        assert status_becomes(client, run_id, "waiting")
        parent = client.get(f"/v1/runs/{run_id}").json()
        kid = client.get(f"/v1/runs/{child}").json()
        assert (parent["children"], parent["parent"]) == ([child], None)
        assert (kid["parent"], kid["children"]) == (run_id, [])
        assert parent["waiting_for"]["kind"] == "child"
        assert parent["waiting_for"]["run"] == child
        assert parent["waiting_for"]["until"] is None
        listed = client.get("/v1/runs", params={"waiting_for": "child"}).json()
        assert [run["id"] for run in listed["runs"]] == [run_id]
        cancelled = client.post(f"/v1/runs/{run_id}/cancel", json={"reason": "not needed"})
        assert cancelled.status_code == 200, cancelled.text
        assert client.get(f"/v1/runs/{child}").json()["status"] == "cancelled"


def test_the_dashboard_links_parent_and_child_both_ways(tab: Tab, served: Served) -> None:
    run_id = served.engine.start("parent").id
    child = _child_of(served, run_id)
    page = tab.page
    sign_in_tab(tab, served, TOKEN, path=f"/runs/{run_id}")
    assert page.inner_text("#children") == child[:12]
    assert f"child run {child[:12]}" in page.inner_text("body")
    tab.screenshot("parent-run")
    page.click(f"#children a[href='/runs/{child}']")
    page.wait_for_url(f"{served.url}/runs/{child}")
    assert page.inner_text("#parent") == run_id[:12]
    page.click("#parent")
    page.wait_for_url(f"{served.url}/runs/{run_id}")

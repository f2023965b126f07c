"""A Python run that continues as new, over a real socket on each store: ``GET
/v1/runs/{id}`` links the ended run and its successor both ways (as the OpenAPI document
declares them), and the run pages link them in a real browser (headless Chromium)."""

from __future__ import annotations

import uuid
from pathlib import Path

from dashboard_support import eventually, sign_in_tab
from server_support import Served, serve, start, status_becomes, write_project

from browsers import Tab

TOKEN = "operator-secret"

PROGRAM = '''
from tarry import App, Context

app = App()


@app.flow("segments")
async def segments(ctx: Context, segment: int = 1) -> int:
    await ctx.step("work", lambda: segment)
    if segment < 2:
        ctx.continue_as_new(segment=segment + 1)
    return segment
'''


def _project(tmp_path: Path, store_url: str) -> Path:
    module = f"segments_{uuid.uuid4().hex[:8]}"
    root = write_project(tmp_path / "project", store_url)
    (root / f"{module}.py").write_text(PROGRAM)
    with (root / "tarry.toml").open("a") as config:
        config.write(f'app = "{module}:app"\n')
    return root


def _chain(served: Served, first: str) -> str:
    """The successor of ``first``, once the chain has ended."""
    store = served.engine.store
    eventually(lambda: (successor := store.continued_as(first)) is not None
               and store.get_run(successor).status.is_terminal, "the chain ended")
    successor = store.continued_as(first)
    assert successor is not None
    return successor


def test_the_api_links_a_run_and_the_run_it_continued_as(tmp_path: Path,
                                                          store_url: str) -> None:
    with serve(_project(tmp_path, store_url)) as served, served.client() as client:
        first = start(client, "segments")["id"]
        assert status_becomes(client, first, "succeeded")
        successor = _chain(served, first)
        ended = client.get(f"/v1/runs/{first}").json()
        following = client.get(f"/v1/runs/{successor}").json()
        listed = client.get("/v1/runs", params={"flow": "segments"}).json()
        schema = client.get("/openapi.json").json()["components"]["schemas"]["RunDocument"]
    assert (ended["exit"], ended["continued_from"], ended["continued_as"]) == (
        "continued", None, successor)
    assert (following["exit"], following["result"], following["continued_from"],
            following["continued_as"]) == ("completed", 2, first, None)
    assert {run["id"]: run["continued_from"] for run in listed["runs"]} == {
        first: None, successor: first}
    assert {"continued_from", "continued_as"} <= set(schema["properties"])


def test_the_run_pages_link_both_ways(tab: Tab, tmp_path: Path, store_url: str) -> None:
    root = _project(tmp_path, store_url)
    with serve(root, {"TARRY_API_TOKENS": f"ops={TOKEN}"}) as served:
        first = served.engine.start("segments").id
        successor = _chain(served, first)
        page = tab.page
        sign_in_tab(tab, served, TOKEN, path=f"/runs/{first}")
        assert page.inner_text("#continued-as") == successor[:12]
        assert page.locator("#continued-from").count() == 0
        tab.screenshot("continued-as")
        page.click("#continued-as")
        page.wait_for_url(f"{served.url}/runs/{successor}")
        assert page.inner_text("#continued-from") == first[:12]
        assert page.locator("#continued-as").count() == 0
        page.click("#continued-from")
        page.wait_for_url(f"{served.url}/runs/{first}")

"""A Python run's journal and each step's duration, over a real socket: in the run document of
``GET /v1/runs/{id}`` (as the OpenAPI document declares it) and on the run's dashboard page."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from server_support import serve, start, status_becomes, write_project

PROGRAM = '''
from tarry import App, Context

app = App()


def fetch() -> dict:
    return {"ok": 1}


@app.flow("pyjournal")
async def pyjournal(ctx: Context) -> str:
    await ctx.step("fetch", fetch)
    return "done"
'''


def test_the_api_and_the_run_page_show_a_python_runs_journal(tmp_path: Path,
                                                              store_url: str) -> None:
    module = f"journal_flows_{uuid.uuid4().hex[:8]}"
    root = write_project(tmp_path / "project", store_url)
    (root / f"{module}.py").write_text(PROGRAM)
    with (root / "tarry.toml").open("a") as config:
        config.write(f'app = "{module}:app"\n')
    with serve(root) as served, served.client() as client:
        run_id = start(client, "pyjournal")["id"]
        assert status_becomes(client, run_id, "succeeded")
        document = client.get(f"/v1/runs/{run_id}").json()
        page = client.get(f"/runs/{run_id}").text
    (fetch,) = document["journal"]
    assert (fetch["name"], fetch["kind"], fetch["status"], fetch["attempt"],
            fetch["result"], fetch["error"]) == ("fetch", "step", "completed", 1, {"ok": 1}, None)
    assert fetch["started_at"] <= fetch["ended_at"]
    assert [(s["step"], s["status"]) for s in document["steps"]] == [("fetch", "completed")]
    journal = page[page.index('id="journal"'):]
    assert re.search(r'<td class="mono">fetch</td>\s*<td class="nowrap">step</td>\s*'
                     r'<td class="nowrap">completed</td>', journal)
    assert "&#34;ok&#34;: 1" in journal

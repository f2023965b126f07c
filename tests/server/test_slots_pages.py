"""A run queued for a concurrency slot, over a real socket on each store: the API's run
document and the dashboard's run page say which key it waits for, how many are ahead and
which run holds the key; the runs list finds it by ``waiting_for=slot``."""

from __future__ import annotations

import html
from pathlib import Path

from server_support import serve, status_becomes

DEPLOY = """\
flow: deploy
inputs:
  repo: { type: string, required: true }
concurrency: { key: "{{ repo }}", limit: 1 }
steps:
  - soak: { wait: { for: 1d } }
"""


def test_a_queued_run_says_its_key_its_place_and_who_holds_the_key(tmp_path: Path,
                                                                    store_url: str) -> None:
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "deploy.yaml").write_text(DEPLOY, encoding="utf-8")
    (tmp_path / "tarry.toml").write_text(f'[tarry]\ndatabase = "{store_url}"\n',
                                         encoding="utf-8")
    with serve(tmp_path) as served, served.client() as client:
        first = client.post("/v1/runs", json={"flow": "deploy",
                                              "inputs": {"repo": "acme/web"}}).json()["id"]
        assert status_becomes(client, first, "waiting")
        second = client.post("/v1/runs", json={"flow": "deploy",
                                               "inputs": {"repo": "acme/web"}}).json()["id"]
        assert status_becomes(client, second, "waiting")

        waiting = client.get(f"/v1/runs/{second}").json()["waiting_for"]
        assert {key: waiting[key] for key in ("kind", "key", "ahead", "holders", "until")} == {
            "kind": "slot", "key": "acme/web", "ahead": 0, "holders": [first], "until": None}
        listed = client.get("/v1/runs", params={"waiting_for": "slot"}).json()["runs"]
        assert [run["id"] for run in listed] == [second]

        page = html.unescape(client.get(f"/runs/{second}").text)
        assert (f'waiting for a slot of concurrency key "acme/web" (0 ahead in the queue), '
                f"held by {first} since ") in page

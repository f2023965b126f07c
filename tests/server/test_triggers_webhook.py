"""examples/triggers behind ``tarry serve``: a GitHub-signed ``issues`` webhook labelled
``deploy`` starts a held deploy over a real socket; a second label is superseded, another
action starts nothing, a forged signature is refused."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from server_support import serve

from tarry.server.signatures import sign
from triggers_example import LABELED, SECRET, environment, example_copy


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of the example (its checks read the copy's window/ folder)."""
    return example_copy(tmp_path)


def checked_once(client: httpx.Client, run_id: str, timeout: float = 10.0) -> bool:
    """Whether the run is held after its first check within ``timeout`` seconds (the
    in-process worker runs on the wall clock)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = client.get(f"/v1/runs/{run_id}").json()
        if run["status"] == "held" and any(e["kind"] == "hold.check" for e in run["history"]):
            return True
        time.sleep(0.01)
    return False


def deliver(client: httpx.Client, payload: dict[str, object],
            secret: str = SECRET) -> httpx.Response:
    """POST a GitHub ``issues`` webhook, signed as GitHub signs it."""
    body = json.dumps(payload).encode()
    headers = {"Content-Type": "application/json", "X-GitHub-Event": "issues",
               **sign("github", secret.encode(), body, datetime.now(UTC))}
    return client.post("/v1/events/github.issues", content=body, headers=headers)


def test_a_signed_label_webhook_starts_a_held_deploy_and_a_second_is_superseded(
        example: Path, store_url: str) -> None:
    (example / "window" / "closed").touch()  # a freeze: the window check answers not yet
    with serve(example, environment(example, store_url)) as served, served.client() as client:
        first = deliver(client, LABELED)
        assert first.status_code == 202, first.text
        [deploy] = first.json()["started"]
        assert checked_once(client, deploy)
        held = client.get("/v1/held").json()
        assert [(r["id"], r["target"]) for r in held["runs"]] == [(deploy, "acme/web#7")]

        again = deliver(client, {**LABELED, "action": "labeled"})
        [second] = again.json()["started"]
        refused = client.get(f"/v1/runs/{second}").json()
        assert (refused["status"], refused["reason"]) == ("refused", "hold-superseded")

        opened = deliver(client, {**LABELED, "action": "opened"})
        assert (opened.status_code, opened.json()["started"]) == (202, [])
        forged = deliver(client, LABELED, secret="not-the-secret")
        assert forged.status_code == 401
        assert len(client.get("/v1/runs", params={"flow": "deploy"}).json()["runs"]) == 2
        flows = client.get("/v1/flows").json()["flows"]
        [trigger] = next(f["triggers"] for f in flows if f["name"] == "deploy")
        assert (trigger["kind"], trigger["event"]) == ("event", "github.issues")
        page = client.get("/flows").text  # the dashboard's flows page: its latest starts
        assert f'<a class="mono" href="/runs/{deploy}">acme/web#7</a> (held' in page

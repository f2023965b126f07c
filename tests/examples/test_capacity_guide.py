"""docs/flows.md "Waiting for capacity": its deploy flow runs one deploy per repository, the
next starting as the one before ends, as the page says."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from markdown_blocks import Document
from tarry.model import RunStatus
from tarry.testing import Harness

GUIDE = Document("docs/flows.md", __file__)
DEPLOY = GUIDE.block("yaml", after="## Waiting for capacity")


async def test_one_deploy_per_repository_and_the_next_starts_as_one_ends(
        tmp_path: Path, store_url: str) -> None:
    with Harness(tmp_path, store_url=store_url) as harness:
        flow = harness.flow(DEPLOY, "flows/deploy.yaml")
        web = [harness.start(flow, {"repo": "acme/web"}) for _ in range(2)]
        api = harness.start(flow, {"repo": "acme/api"})
        await harness.run_due()
        kinds = {run: harness.document(run)["waiting_for"]["kind"] for run in (*web, api)}
        assert sorted(kinds[run] for run in web) == ["slot", "timer"]
        assert kinds[api] == "timer"
        [queued] = [run for run in web if kinds[run] == "slot"]
        waiting = harness.document(queued)["waiting_for"]
        assert (waiting["key"], waiting["ahead"], harness.record(queued).due_at) == (
            "acme/web", 0, None)
        await harness.advance(timedelta(minutes=30))
        assert harness.document(queued)["waiting_for"]["kind"] == "timer"
        await harness.advance(timedelta(minutes=30))
        assert {harness.record(run).status for run in (*web, api)} == {RunStatus.SUCCEEDED}

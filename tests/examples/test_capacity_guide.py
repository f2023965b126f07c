"""docs/flows.md "Waiting for capacity": its deploy flow runs one deploy per repository, the
next starting as the one before ends, and its sync flow calls the vendor as many at once as
docs/limits.md's pool allows, as the pages say."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

from markdown_blocks import Document
from tarry.actions import ActionContext
from tarry.config import Limits, load_settings
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


LIMITS = Document("docs/limits.md", __file__)
POOLS = LIMITS.block("toml", after="## Settable limits")
SYNC = GUIDE.block("yaml", after="A **pool** paces a step")


async def test_the_sync_flow_calls_the_vendor_four_at_a_time(tmp_path: Path,
                                                              store_url: str) -> None:
    (tmp_path / "tarry.toml").write_text(POOLS, encoding="utf-8")
    pools = load_settings(tmp_path, env={}).limits.pools
    assert dict(pools) == {"vendor-api": 4}
    inside = most = 0

    async def update(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        nonlocal inside, most
        inside += 1
        most = max(most, inside)
        for _ in range(3):
            await asyncio.sleep(0)
        inside -= 1
        return {"account": args["account"]}

    with Harness(tmp_path / "h", store_url=store_url, actions={"vendor.update": update},
                 limits=Limits(pools=pools)) as harness:
        run_id = harness.start(harness.flow(SYNC, "flows/sync.yaml"),
                               {"accounts": [f"a{n}" for n in range(12)]})
        await harness.run_until_idle()
        assert harness.record(run_id).status is RunStatus.SUCCEEDED
    assert most == 4

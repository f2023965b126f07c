"""A thousand per-item waits in one run, each branch with its own actions and reminders."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tarry.actions import ActionContext
from tarry.model import RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ITEMS = 1000

BATCH = """
flow: batch
inputs:
  items: { type: array, required: true }
steps:
  - each:
      for_each: "{{ items }}"
      concurrency: 1000
      steps:
        - ask: { request.send: { key: "{{ item }}" } }
        - reply:
            wait_for: item.reply
            match: { key: "{{ item }}" }
            timeout: 3d
            remind:
              every: 1d
              steps:
                - nudge: { request.send: { key: "{{ item }}", reminder: true } }
"""

MANIFESTS = "events:\n  item.reply:\n    correlate_on: [key]\n"


async def test_a_thousand_branches_send_remind_and_wait_each_on_its_own(
        tmp_path: Path, store_url: str) -> None:
    sent: list[tuple[str, bool]] = []

    def send(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        sent.append((args["key"], bool(args.get("reminder"))))
        return {"sent": args["key"]}

    with Harness(tmp_path, start=START, actions={"request.send": send},
                 manifests=MANIFESTS, store_url=store_url) as harness:
        run_id = harness.start(harness.flow(BATCH), {"items": [f"k{i}" for i in range(ITEMS)]})
        await harness.run_due()
        await harness.advance(timedelta(hours=36))  # one reminder each, then half of them answer
        for i in range(0, ITEMS, 2):
            harness.send("item.reply", {"key": f"k{i}"})
        await harness.run_until_idle()

        document = harness.document(run_id)
        assert document["status"] == RunStatus.SUCCEEDED
        statuses = [scope["reply"]["status"] for scope in document["bindings"]["each"]]
        assert statuses == ["received" if i % 2 == 0 else "timeout" for i in range(ITEMS)]
        requests = [key for key, reminder in sent if not reminder]
        reminders = [key for key, reminder in sent if reminder]
        assert sorted(requests) == sorted(f"k{i}" for i in range(ITEMS))
        # every item was nudged on day 1; the unanswered ones again on day 2 (day 3 is the deadline)
        assert len(reminders) == ITEMS + ITEMS // 2
        assert harness.clock.now() == START + timedelta(days=3)

"""A flow's ``throttle``: runs of one key start at most ``limit`` per ``per``, first come
first served, the others waiting (``waiting_for.kind`` = throttle) until their turn."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tarry.model import RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

FLOW = """
flow: onboard
inputs:
  customer: { type: string, required: true }
throttle: { key: "{{ customer }}", limit: 3, per: 1m }
steps:
  - hello:
      log: "onboarding {{ customer }}"
"""


def _started_at(harness: Harness, run_id: str) -> datetime:
    return next(entry.at for entry in harness.engine.store.history(run_id)
                if entry.kind == "started")


async def test_a_burst_of_ten_starts_three_now_three_a_minute_later_and_so_on(
        tmp_path: Path, store_url: str) -> None:
    with Harness(tmp_path, start=START, store_url=store_url) as harness:
        flow = harness.flow(FLOW)
        runs = []
        for _ in range(10):
            runs.append(harness.start(flow, {"customer": "acme"}))
            harness.clock.advance(timedelta(milliseconds=1))
        await harness.run_due()
        statuses = [harness.record(run).status for run in runs]
        assert statuses == [RunStatus.SUCCEEDED] * 3 + [RunStatus.WAITING] * 7
        fourth = harness.document(runs[3])
        assert fourth["waiting_for"]["kind"] == "throttle"
        assert fourth["waiting_for"]["key"] == "acme"
        now = harness.clock.now()
        assert fourth["waiting_for"]["until"] == "2026-03-02T09:01:00.010Z"
        assert harness.record(runs[3]).due_at == now + timedelta(minutes=1)
        assert harness.record(runs[9]).due_at == now + timedelta(minutes=3)
        await harness.run_until_idle()
        starts = [_started_at(harness, run) for run in runs]
        assert starts == [now] * 3 + [now + timedelta(minutes=1)] * 3 \
            + [now + timedelta(minutes=2)] * 3 + [now + timedelta(minutes=3)]
        assert all(harness.record(run).status is RunStatus.SUCCEEDED for run in runs)

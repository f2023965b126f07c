"""docs/flows.md "Pacing starts" and docs/triggers.md's debounce: the flows load as printed
and do what the pages say, on the virtual clock (a burst of 250 onboardings starts 100, 100
and 50 a minute apart; a burst of pushes starts one build, of the last)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from markdown_blocks import Document
from tarry.model import RunStatus
from tarry.testing import Harness

FLOWS = Document("docs/flows.md", __file__)
TRIGGERS = Document("docs/triggers.md", __file__)
ONBOARD = FLOWS.block("yaml", after="### Throttle: no more than N starts per period")
DEBOUNCED_ON = FLOWS.block("yaml", after="### Debounce: one run for a burst of events")
BUILD = TRIGGERS.block("yaml", starting="flow: build")
MANIFESTS = "events:\n  forge.push:\n    correlate_on: [repo]\n"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


async def test_a_burst_of_250_onboardings_starts_100_a_minute(tmp_path: Path) -> None:
    with Harness(tmp_path, start=START) as harness:
        flow = harness.flow(ONBOARD)
        runs = harness.engine.start_many(flow, [{"customer": "acme", "user": f"u{n}"}
                                                for n in range(250)])
        other = harness.start(flow, {"customer": "globex", "user": "g1"})
        await harness.run_due()
        assert harness.record(other).status is RunStatus.SUCCEEDED
        counts = []
        for minute in range(3):
            await harness.run_until(START + timedelta(minutes=minute))
            counts.append(sum(harness.record(run.id).status is RunStatus.SUCCEEDED
                              for run in runs))
        assert counts == [100, 200, 250]
        assert harness.engine.runs(waiting_for="throttle") == []


async def test_a_burst_of_pushes_starts_one_build_of_the_last(tmp_path: Path) -> None:
    assert DEBOUNCED_ON.strip() in BUILD  # the snippet is the trigger of the whole flow
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "build.yaml").write_text(BUILD, encoding="utf-8")
    with Harness(tmp_path, start=START, manifests=MANIFESTS) as harness:
        started = set()
        for number in range(5):
            started |= set(harness.send("forge.push", {"repo": "acme/web",
                                                       "sha": f"s{number}"}).started)
            await harness.advance(timedelta(minutes=3))
        [run_id] = started
        assert harness.record(run_id).status is RunStatus.PENDING
        await harness.advance(timedelta(minutes=3))  # 5m after the last push, at +12m
        record = harness.record(run_id)
        assert (record.status, record.inputs["sha"]) == (RunStatus.SUCCEEDED, "s4")

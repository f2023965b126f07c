"""A throttled run, seen from outside and at its edges, on both stores: its wait explained
in one line, listed by ``waiting_for=throttle``; a held flow's runs take their turns once
their hold clears; a key that does not render fails the run, saying why."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tarry.clock import iso
from tarry.engine.explain import explain_wait
from tarry.model import RunStatus
from tarry.server.dashboard.present import wait_line
from tarry.testing import Harness

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ONE_AN_HOUR = """\
flow: report
inputs:
  team: { type: string, required: true }
throttle: { key: "{{ team }}", limit: 1, per: 1h }
steps:
  - sent: { log: "report for {{ team }}" }
"""


async def test_a_throttled_run_explains_its_wait_and_is_listed_by_it(
        tmp_path: Path, store_url: str) -> None:
    with Harness(tmp_path, start=START, store_url=store_url) as harness:
        flow = harness.flow(ONE_AN_HOUR)
        first = harness.start(flow, {"team": "ops"})
        harness.clock.advance(timedelta(milliseconds=1))  # due after the first: behind it
        second = harness.start(flow, {"team": "ops"})
        other = harness.start(flow, {"team": "sales"})
        await harness.run_due()
        now = harness.clock.now()
        assert [harness.record(run).status for run in (first, second, other)] == [
            RunStatus.SUCCEEDED, RunStatus.WAITING, RunStatus.SUCCEEDED]
        document = harness.document(second)
        until = iso(now + timedelta(hours=1))
        explained = document["waiting_for"].pop("explanation")
        assert document["waiting_for"] == {
            "kind": "throttle", "step": None, "key": "ops", "until": until,
            "since": iso(now), "limit": 1, "per": "1h"}
        assert explained == explain_wait(document) == (
            f"waiting for its turn to start with key 'ops' (throttle: at most 1 starts per "
            f"1h) since {iso(now)} until {until}; then runs its first step")
        assert wait_line(document["waiting_for"], now) == (
            "throttle 'ops': its turn to start · starts at 2026-03-02 10:00:00.001 UTC (in 1h)")
        listed = harness.engine.runs(waiting_for="throttle")
        assert [run.id for run in listed] == [second]
        assert harness.engine.store.count_runs_per_status(waiting_for="throttle") == {
            RunStatus.WAITING: 1}
        await harness.run_until(now + timedelta(hours=1))
        assert harness.history_kinds(second) == [
            "created", "throttle", "started", "step.started", "log", "step.completed",
            "succeeded"]


async def test_a_held_flow_takes_its_turns_once_the_hold_clears(
        tmp_path: Path, store_url: str) -> None:
    opens = START + timedelta(hours=2)
    held = ONE_AN_HOUR.replace("steps:", f'hold:\n  - after: "{iso(opens)}"\nsteps:')
    with Harness(tmp_path, start=START, store_url=store_url) as harness:
        flow = harness.flow(held)
        runs = [harness.start(flow, {"team": "ops"}) for _ in range(2)]
        await harness.run_until(opens)
        # both cleared at once: the first to reach its first step starts, the other waits
        done, waiting = sorted(runs, key=lambda run: harness.record(run).status != "succeeded")
        assert harness.record(done).status is RunStatus.SUCCEEDED
        assert harness.record(waiting).status is RunStatus.WAITING
        assert harness.record(waiting).due_at == opens + timedelta(hours=1)
        assert harness.history_kinds(waiting)[:3] == ["created", "hold.cleared", "throttle"]
        await harness.run_until_idle()
        started = [e.at for e in harness.engine.store.history(waiting) if e.kind == "started"]
        assert started == [opens + timedelta(hours=1)]


async def test_a_key_that_does_not_render_fails_the_run_saying_why(
        tmp_path: Path, store_url: str) -> None:
    source = ONE_AN_HOUR.replace('key: "{{ team }}"', 'key: "{{ team.name }}"')
    with Harness(tmp_path, start=START, store_url=store_url) as harness:
        run_id = harness.start(harness.flow(source), {"team": "ops"})
        await harness.run_due()
        record = harness.record(run_id)
        assert record.status is RunStatus.FAILED
        assert record.error is not None
        assert record.error["type"] == "expression"
        assert record.error["message"].startswith("throttle: ")
        assert "name" in record.error["message"]


async def test_a_key_beyond_the_limit_fails_the_run_saying_why(
        tmp_path: Path, store_url: str) -> None:
    with Harness(tmp_path, start=START, store_url=store_url) as harness:
        run_id = harness.start(harness.flow(ONE_AN_HOUR), {"team": "t" * 600})
        await harness.run_due()
        record = harness.record(run_id)
        assert record.status is RunStatus.FAILED
        assert record.error is not None
        assert record.error["type"] == "value"
        assert record.error["message"].startswith("throttle: the throttle's key")
        assert "512" in record.error["message"]

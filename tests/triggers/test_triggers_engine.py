"""Triggers start runs (SPEC 3.8), on the virtual clock and both stores: events that start
runs in the transaction that records them, and schedules firing at their local times."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from textwrap import dedent

import pytest

from tarry.config import Limits
from tarry.model import EventState, RunStatus
from tarry.testing import Harness

START = datetime(2026, 10, 23, 14, 40, tzinfo=UTC)  # a Friday, 16:40 in Berlin
MANIFESTS = dedent("""
    events:
      forge.label:
        correlate_on: [repo]
        schema:
          type: object
          required: [repo, number, label]
      deploy.done:
        correlate_on: [repo]
""")

DEPLOY = """\
flow: deploy
inputs:
  repo: { type: string, required: true }
on:
  - event: forge.label
    if: "{{ event.label == 'deploy' }}"
    target: "{{ event.repo }}#{{ event.number }}"
    inputs: { repo: "{{ event.repo }}" }
steps:
  - done: { exit: deployed }
"""

WAITER = """\
flow: waiter
steps:
  - labelled:
      wait_for: forge.label
      match: { repo: acme/web }
      timeout: 1d
  - done: { exit: seen }
"""


def write_flows(directory: Path, **flows: str) -> None:
    """Write each flow source to ``flows/<name>.yaml``."""
    (directory / "flows").mkdir(exist_ok=True)
    for name, source in flows.items():
        (directory / "flows" / f"{name}.yaml").write_text(source, encoding="utf-8")


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    write_flows(tmp_path, deploy=DEPLOY)
    h = Harness(tmp_path, start=START, manifests=MANIFESTS, store_url=store_url)
    yield h
    h.close()


def runs_of(harness: Harness, flow: str) -> list[str]:
    """The ids of the runs of ``flow``, oldest first."""
    return [r.id for r in reversed(harness.engine.store.list_runs(flow=flow, limit=1000))]


LABEL = {"repo": "acme/web", "number": 7, "label": "deploy"}


async def test_a_matching_event_starts_a_run_with_its_computed_target_and_inputs(
        harness: Harness) -> None:
    event = harness.send("forge.label", LABEL, id="ev-1")

    [run_id] = runs_of(harness, "deploy")
    assert event.started == (run_id,)
    record = harness.record(run_id)
    assert (record.target, record.inputs, record.status) == (
        "acme/web#7", {"repo": "acme/web"}, RunStatus.PENDING)
    created = harness.engine.store.history(run_id)[0]
    assert created.data == {"target": "acme/web#7", "trigger": "event",
                            "event_type": "forge.label", "event_id": "ev-1", "index": 0}
    await harness.run_due()
    assert harness.record(run_id).exit == "deployed"


async def test_an_event_the_condition_rejects_starts_nothing(harness: Harness) -> None:
    event = harness.send("forge.label", {**LABEL, "label": "docs"}, id="ev-1")
    assert (event.started, runs_of(harness, "deploy")) == ((), [])


async def test_a_duplicate_event_starts_nothing_more(harness: Harness) -> None:
    harness.send("forge.label", LABEL, id="ev-1")
    again = harness.send("forge.label", LABEL, id="ev-1")
    assert again.state is EventState.DUPLICATE
    assert len(runs_of(harness, "deploy")) == 1


async def test_an_event_both_starts_a_run_and_resumes_a_waiting_one(harness: Harness) -> None:
    waiter = harness.start(harness.flow(WAITER))
    await harness.run_due()
    event = harness.send("forge.label", LABEL, id="ev-1")
    assert (event.state, event.runs, len(event.started)) == (EventState.DELIVERED, (waiter,), 1)
    await harness.run_due()
    assert harness.record(waiter).exit == "seen"
    assert harness.record(event.started[0]).exit == "deployed"


async def test_an_invalid_event_starts_nothing_until_it_is_redelivered_corrected(
        harness: Harness) -> None:
    event = harness.send("forge.label", {"repo": "acme/web", "label": "deploy"}, id="ev-1")
    assert (event.state, event.started) == (EventState.INVALID, ())

    fixed = harness.engine.redeliver("ev-1", LABEL)

    assert len(fixed.started) == 1
    assert harness.record(fixed.started[0]).target == "acme/web#7"


async def test_a_trigger_whose_expression_fails_starts_a_refused_run_saying_why(
        tmp_path: Path, store_url: str) -> None:
    write_flows(tmp_path, deploy=DEPLOY.replace("{{ event.number }}", "{{ event.issue }}"))
    harness = Harness(tmp_path, start=START, manifests=MANIFESTS, store_url=store_url)
    try:
        [run_id] = harness.send("forge.label", LABEL, id="ev-1").started
        record = harness.record(run_id)
        assert (record.status, record.reason) == (RunStatus.REFUSED, "trigger-invalid")
        refused = harness.engine.store.history(run_id)[-1]
        assert refused.data == {
            "reason": "trigger-invalid",
            "message": "trigger at line 5: 'event' has no key 'issue': "
                       "{{ event.repo }}#{{ event.issue }}"}
    finally:
        harness.close()


HELD_DEPLOY = DEPLOY.replace("on:\n", "hold:\n  - after: \"2026-10-26T08:00:00Z\"\non:\n")


async def test_a_second_label_while_the_first_is_held_is_refused_superseded(
        tmp_path: Path, store_url: str) -> None:
    write_flows(tmp_path, deploy=HELD_DEPLOY)
    harness = Harness(tmp_path, start=START, manifests=MANIFESTS, store_url=store_url)
    try:
        [first] = harness.send("forge.label", LABEL, id="ev-1").started
        [second] = harness.send("forge.label", LABEL, id="ev-2").started

        assert harness.record(first).status is RunStatus.HELD
        refused = harness.record(second)
        assert (refused.status, refused.reason) == (RunStatus.REFUSED, "hold-superseded")
        assert harness.engine.store.history(second)[-1].data == {
            "reason": "hold-superseded", "sibling": first}
        await harness.run_until(datetime(2026, 10, 26, 8, 0, 1, tzinfo=UTC))
        assert harness.record(first).exit == "deployed"
    finally:
        harness.close()


REPORT = """\
flow: report
on:
  - schedule: "0 9 * * *"
    timezone: Europe/Berlin
    catch_up: {policy}
steps:
  - done: {{ exit: reported }}
"""


def schedule_harness(tmp_path: Path, store_url: str, flow: str,
                     start: datetime = START) -> Harness:
    """A harness whose flows folder holds ``flow`` (as report.yaml)."""
    write_flows(tmp_path, report=flow)
    return Harness(tmp_path, start=start, manifests=MANIFESTS, store_url=store_url)


def created_at(harness: Harness, flow: str = "report") -> list[datetime]:
    """When each run of ``flow`` was created, oldest first."""
    return [harness.record(run_id).created_at for run_id in runs_of(harness, flow)]


async def test_a_schedule_fires_at_nine_local_time_across_the_dst_change(
        tmp_path: Path, store_url: str) -> None:
    harness = schedule_harness(tmp_path, store_url, REPORT.format(policy="latest"))
    try:
        await harness.run_due()  # the worker stores the schedule
        await harness.run_until(datetime(2026, 10, 27, 12, tzinfo=UTC))
        # 09:00 Berlin is 07:00 UTC until Sunday 25 October, 08:00 UTC after.
        assert created_at(harness) == [datetime(2026, 10, 24, 7, tzinfo=UTC),
                                       datetime(2026, 10, 25, 8, tzinfo=UTC),
                                       datetime(2026, 10, 26, 8, tzinfo=UTC),
                                       datetime(2026, 10, 27, 8, tzinfo=UTC)]
        runs = runs_of(harness, "report")
        assert all(harness.record(r).exit == "reported" for r in runs)
        assert harness.engine.store.history(runs[0])[0].data == {
            "trigger": "schedule", "schedule": harness.engine.triggers.schedules().popitem()[0],
            "scheduled_at": "2026-10-24T07:00:00.000Z"}
    finally:
        harness.close()


@pytest.mark.parametrize(("policy", "expected"), [
    ("none", []),
    ("latest", [datetime(2026, 10, 27, 8, tzinfo=UTC)]),
    ("all", [datetime(2026, 10, 24, 7, tzinfo=UTC), datetime(2026, 10, 25, 8, tzinfo=UTC),
             datetime(2026, 10, 26, 8, tzinfo=UTC), datetime(2026, 10, 27, 8, tzinfo=UTC)]),
])
async def test_after_downtime_catch_up_decides_which_missed_occurrences_are_created(
        tmp_path: Path, store_url: str, policy: str, expected: list[datetime]) -> None:
    harness = schedule_harness(tmp_path, store_url, REPORT.format(policy=policy))
    try:
        await harness.run_due()  # stored on Friday afternoon, then every worker is down
        harness.clock.set(datetime(2026, 10, 27, 12, tzinfo=UTC))  # back on Tuesday at noon
        await harness.run_due()
        assert created_at(harness) == [datetime(2026, 10, 27, 12, tzinfo=UTC)] * len(expected)
        scheduled = [harness.engine.store.history(r)[0].data["scheduled_at"]
                     for r in runs_of(harness, "report")]
        assert sorted(scheduled) == [e.isoformat().replace("+00:00", ".000Z") for e in expected]
    finally:
        harness.close()


HELD_REPORT = """\
flow: report
hold:
  - check: ledger
on:
  - schedule: "0 9 * * *"
    timezone: Europe/Berlin
steps:
  - done: { exit: reported }
"""


async def test_a_held_occurrence_still_held_at_the_next_is_superseded_by_it(
        tmp_path: Path, store_url: str) -> None:
    never_ready = tmp_path / "checks" / "ledger"
    never_ready.parent.mkdir()
    never_ready.write_text("#!/bin/sh\nexit 3\n")
    never_ready.chmod(0o755)
    write_flows(tmp_path, report=HELD_REPORT)
    harness = Harness(tmp_path, start=START, manifests=MANIFESTS, store_url=store_url,
                      checks={"ledger": never_ready},
                      limits=Limits(hold_max=timedelta(days=3), check_interval=timedelta(hours=1)))
    try:
        await harness.run_due()
        await harness.run_until(datetime(2026, 10, 24, 7, 0, 1, tzinfo=UTC))
        [first] = runs_of(harness, "report")
        assert harness.record(first).status is RunStatus.HELD

        await harness.run_until(datetime(2026, 10, 25, 8, 0, 1, tzinfo=UTC))

        first_now, second = (harness.record(r) for r in runs_of(harness, "report"))
        assert (first_now.status, first_now.reason) == (RunStatus.REFUSED, "hold-superseded")
        assert harness.engine.store.history(first)[-1].data == {
            "reason": "hold-superseded", "successor": second.id}
        assert second.status is RunStatus.HELD
    finally:
        harness.close()


async def test_a_schedule_no_flow_declares_any_more_is_dropped(
        tmp_path: Path, store_url: str) -> None:
    harness = schedule_harness(tmp_path, store_url, REPORT.format(policy="latest"))
    try:
        await harness.run_due()
        (tmp_path / "flows" / "report.yaml").unlink()
        await harness.engine.triggers.sync(harness.engine.async_store)
        assert harness.engine.store.next_due_at() is None
    finally:
        harness.close()


def test_the_next_due_instant_includes_the_next_occurrence(tmp_path: Path,
                                                             store_url: str) -> None:
    harness = schedule_harness(tmp_path, store_url, REPORT.format(policy="latest"))
    try:
        harness.engine.store.sync_schedules(
            [(key, "report", datetime(2026, 10, 24, 7, tzinfo=UTC))
             for key in harness.engine.triggers.schedules()], START)
        assert harness.engine.store.next_due_at() == datetime(2026, 10, 24, 7, tzinfo=UTC)
    finally:
        harness.close()



@pytest.mark.parametrize(("scheduled", "fired"), [
    (None, ["report", "standup"]), (["report"], ["report"]), ([], [])])
async def test_only_the_schedules_of_the_flows_named_fire(
        tmp_path: Path, store_url: str, scheduled: list[str] | None, fired: list[str]) -> None:
    write_flows(tmp_path, report=REPORT.format(policy="latest"),
                standup=REPORT.format(policy="latest").replace("flow: report", "flow: standup"))
    harness = Harness(tmp_path, start=START, manifests=MANIFESTS, store_url=store_url,
                      schedules=scheduled)
    try:
        await harness.run_due()
        await harness.run_until(datetime(2026, 10, 24, 12, tzinfo=UTC))
        assert sorted(r.flow for r in harness.engine.store.list_runs()) == fired
    finally:
        harness.close()

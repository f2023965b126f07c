"""The constructs and modifiers of SPEC 3.2–3.4, executed by the real engine on a virtual clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext, StepFailure
from tarry.model import RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class Recorder:
    """A user action that records its calls and answers from a script of results."""

    def __init__(self, *results: Any) -> None:
        self.results = list(results)
        self.calls: list[tuple[dict[str, Any], ActionContext]] = []

    def __call__(self, args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        self.calls.append((args, ctx))
        result = self.results.pop(0) if len(self.results) > 1 else self.results[0]
        if isinstance(result, Exception):
            raise result
        return dict(result)

    @property
    def times(self) -> list[datetime]:
        return [ctx.now for _, ctx in self.calls]


@pytest.fixture
def probe() -> Recorder:
    return Recorder({"status": "pending"})


@pytest.fixture
def harness(tmp_path: Path, probe: Recorder, store_url: str) -> Iterator[Harness]:
    h = Harness(tmp_path, start=START, actions={"probe": probe}, store_url=store_url)
    yield h
    h.close()


async def run_flow(harness: Harness, source: str, inputs: dict[str, Any] | None = None) -> str:
    run_id = harness.start(harness.flow(source), inputs)
    await harness.run_until_idle()
    return run_id


async def test_wait_for_suspends_then_wakes_at_the_instant(harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: cooling
steps:
  - cooling_off:
      wait: { for: 2d }
  - done:
      set: { ok: true }
"""))
    await harness.run_due()
    record = harness.record(run_id)
    assert record.status is RunStatus.WAITING
    assert record.due_at == START + timedelta(days=2)
    assert record.waiting_for == {"kind": "timer", "step": "cooling_off",
                                  "until": "2026-03-03T09:00:00.000Z",
                                  "event_type": None, "match": None,
                                  "since": "2026-03-01T09:00:00.000Z", "others": 0}
    await harness.advance(timedelta(days=2) - timedelta(milliseconds=1))
    assert harness.record(run_id).status is RunStatus.WAITING
    await harness.advance(timedelta(milliseconds=1))
    document = harness.document(run_id)
    assert document["status"] == "succeeded"
    assert document["exit"] == "completed"
    assert document["bindings"] == {"cooling_off": {"until": "2026-03-03T09:00:00.000Z"},
                                    "done": {"ok": True}}
    woke = next(e for e in document["history"] if e["kind"] == "step.completed")
    assert woke == {"at": "2026-03-03T09:00:00.000Z", "kind": "step.completed",
                    "step": "cooling_off", "data": {}}


async def test_wait_until_a_computed_instant(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: onboarding
inputs:
  hire: { type: object, required: true }
steps:
  - day_before:
      wait: { until: "{{ hire.start_date | minus(1d) }}" }
""", {"hire": {"start_date": "2026-03-10T08:00:00Z"}})
    document = harness.document(run_id)
    assert document["status"] == "succeeded"
    assert document["bindings"]["day_before"] == {"until": "2026-03-09T08:00:00.000Z"}
    assert harness.clock.now() == datetime(2026, 3, 9, 8, 0, tzinfo=UTC)


async def test_wait_until_a_past_instant_resumes_at_once(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: late
steps:
  - w:
      wait: { until: "2020-01-01T00:00:00Z" }
""")
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    assert harness.clock.now() == START


async def test_zoneless_computed_instant_fails_the_step(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: zoneless
steps:
  - w:
      wait: { until: "{{ '2026-05-01T10:00:00' }}" }
""")
    record = harness.record(run_id)
    assert record.status is RunStatus.FAILED
    assert record.error is not None
    assert record.error["type"] == "expression"
    assert record.error["step"] == "w"
    assert "has no timezone" in record.error["message"]


async def test_flow_timezone_reads_zoneless_instants(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: berlin
timezone: Europe/Berlin
steps:
  - w:
      wait: { until: "{{ '2026-03-01T12:00:00' }}" }
""")
    assert harness.document(run_id)["bindings"]["w"] == {"until": "2026-03-01T11:00:00.000Z"}


POLL = """
flow: polling
steps:
  - indexed:
      repeat: { every: 30s, max: 4, until: "{{ check.status == 'indexed' }}" }
      steps:
        - check:
            probe: { attempt: "{{ loop.index }}" }
"""


async def test_repeat_polls_until_the_condition_holds(harness: Harness, probe: Recorder) -> None:
    probe.results = [{"status": "pending"}, {"status": "pending"}, {"status": "indexed"}]
    run_id = await run_flow(harness, POLL)
    document = harness.document(run_id)
    assert document["status"] == "succeeded"
    assert document["bindings"]["indexed"] == [
        {"check": {"status": "pending"}}, {"check": {"status": "pending"}},
        {"check": {"status": "indexed"}}]
    assert probe.times == [START, START + timedelta(seconds=30), START + timedelta(seconds=60)]
    assert [args for args, _ in probe.calls] == [{"attempt": 0}, {"attempt": 1},
                                                {"attempt": 2}]


async def test_repeat_exhausted_fails_the_step(harness: Harness, probe: Recorder) -> None:
    run_id = await run_flow(harness, POLL)
    record = harness.record(run_id)
    assert record.status is RunStatus.FAILED
    assert record.error == {"type": "repeat-exhausted", "step": "indexed",
                            "message": "'until' was still false after 4 iterations"}
    assert len(probe.calls) == 4


async def test_optional_repeat_exhaustion_lets_the_run_continue(harness: Harness) -> None:
    run_id = await run_flow(harness, POLL.replace("      repeat:", "      optional: true\n"
                                                  "      repeat:") + """
  - after:
      set: { reached: true }
""")
    document = harness.document(run_id)
    assert document["status"] == "succeeded"
    assert document["bindings"]["indexed"] == {
        "failed": True, "error": {"type": "repeat-exhausted",
                                  "message": "'until' was still false after 4 iterations"}}
    assert document["bindings"]["after"] == {"reached": True}


async def test_repeat_with_backoff_grows_the_pause(harness: Harness, probe: Recorder) -> None:
    await run_flow(harness, """
flow: backoff
steps:
  - indexed:
      repeat:
        backoff: { initial: 10s, max_delay: 35s, rate: 2 }
        max: 5
        until: "{{ check.status == 'indexed' }}"
      steps:
        - check: { probe: {} }
""")
    gaps = [(b - a).total_seconds() for a, b in zip(probe.times, probe.times[1:], strict=False)]
    assert gaps == [10, 20, 35, 35]


BACKOFF_POLL = """
flow: backoff
steps:
  - indexed:
      repeat:
        backoff: { initial: 10s, max_delay: 35s, rate: 2 }
        max: 5
        until: "{{ check.UNTIL }}"
      steps:
        - check: { probe: {} }
"""


async def test_repeat_until_a_boolean_value_polls_until_it_is_true(
        harness: Harness, probe: Recorder) -> None:
    probe.results = [{"ready": False}, {"ready": False}, {"ready": True}]
    run_id = await run_flow(harness, BACKOFF_POLL.replace("UNTIL", "ready"))
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    assert probe.times == [START, START + timedelta(seconds=10), START + timedelta(seconds=30)]


@pytest.mark.parametrize(("source", "shown"), [
    (POLL.replace("check.status == 'indexed'", "check.status"), "'pending'"),
    (BACKOFF_POLL.replace("UNTIL", "status"), "'pending'"),
    (BACKOFF_POLL.replace("UNTIL", "missing | default(null)"), "null"),
    (BACKOFF_POLL.replace("UNTIL", "attempts"), "3"),
])
async def test_repeat_until_that_is_not_true_or_false_fails_the_first_iteration(
        harness: Harness, probe: Recorder, source: str, shown: str) -> None:
    probe.results = [{"status": "pending", "attempts": 3}]
    run_id = await run_flow(harness, source)
    record = harness.record(run_id)
    expression = source.split('until: "')[1].split('"', maxsplit=1)[0]
    assert record.status is RunStatus.FAILED
    assert record.error == {
        "type": "expression", "step": "indexed",
        "message": f"'until' must be true or false, got {shown}; compare the value, such as "
                   f"{{{{ check.status == 'done' }}}}: {expression}"}
    assert len(probe.calls) == 1


async def test_for_each_binds_every_iteration_scope(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: each
inputs:
  vendors: { type: array, required: true }
steps:
  - replies:
      for_each: "{{ vendors }}"
      as: vendor
      steps:
        - pause:
            wait: { for: 1h }
        - note:
            set: { who: "{{ vendor }}", index: "{{ loop.index }}", first: "{{ loop.first }}" }
""", {"vendors": ["a", "b"]})
    document = harness.document(run_id)
    assert document["status"] == "succeeded"
    assert [scope["note"] for scope in document["bindings"]["replies"]] == [
        {"who": "a", "index": 0, "first": True}, {"who": "b", "index": 1, "first": False}]
    assert harness.clock.now() == START + timedelta(hours=2)  # sequential: one after the other


async def test_for_each_concurrent_branches_wait_independently(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: fanout
steps:
  - branches:
      for_each: [3, 1, 2]
      concurrency: 3
      steps:
        - pause:
            wait: { for: "{{ item * 1h }}" }
""")
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    assert harness.clock.now() == START + timedelta(hours=3)
    completed = [e for e in harness.engine.store.history(run_id) if e.kind == "step.completed"
                 and e.step and e.step.endswith("pause")]
    assert [(e.step, e.at - START) for e in completed] == [
        ("branches[1].pause", timedelta(hours=1)), ("branches[2].pause", timedelta(hours=2)),
        ("branches[0].pause", timedelta(hours=3))]


async def test_for_each_tolerates_failures(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: tolerant
steps:
  - each:
      for_each: [1, 2, 3]
      tolerate: 1
      steps:
        - maybe:
            if: "{{ item == 2 }}"
            fail: "item {{ item }} is bad"
""")
    document = harness.document(run_id)
    assert document["status"] == "succeeded"
    assert document["bindings"]["each"][1] == {
        "failed": True, "error": {"type": "failed", "message": "item 2 is bad",
                                  "step": "each[1].maybe"}}


async def test_group_recover_binds_error_and_completes(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: recovering
steps:
  - guarded:
      steps:
        - boom:
            fail: "no luck"
        - never:
            set: { reached: true }
      recover:
        - handled:
            set: { what: "{{ error.message }}", where: "{{ error.step }}" }
  - next:
      set: { ok: true }
""")
    document = harness.document(run_id)
    assert document["status"] == "succeeded"
    assert document["bindings"]["guarded"] == {
        "handled": {"what": "no luck", "where": "guarded.boom"}}
    assert document["bindings"]["next"] == {"ok": True}


async def test_the_first_recover_step_starts_afresh_after_a_step_that_failed_midway(
        harness: Harness) -> None:
    # A repeat that failed keeps state of its own (its iterations); the recover step after
    # it must not inherit it: it starts, is recorded as started, and runs its own body.
    run_id = await run_flow(harness, """
flow: afresh
steps:
  - guarded:
      steps:
        - poll:
            repeat: { every: 1s, max: 1, until: "{{ check.done }}" }
            steps:
              - check: { set: { done: false } }
      recover:
        - again:
            repeat: { every: 1s, max: 2, until: "{{ loop.index == 1 }}" }
            steps:
              - tick: { set: { n: "{{ loop.index }}" } }
""")
    document = harness.document(run_id)
    assert document["status"] == "succeeded", document["error"]
    started = [entry["step"] for entry in document["history"] if entry["kind"] == "step.started"]
    assert "guarded.again" in started
    assert [scope["tick"] for scope in document["bindings"]["guarded"]["again"]] == [
        {"n": 0}, {"n": 1}]


async def test_flow_level_recover(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: toplevel
steps:
  - boom:
      fail: "broken"
recover:
  - cleanup:
      set: { saw: "{{ error.type }}" }
""")
    document = harness.document(run_id)
    assert document["status"] == "succeeded"
    assert document["bindings"]["cleanup"] == {"saw": "failed"}


async def test_failing_recover_propagates(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: doublefault
steps:
  - guarded:
      steps:
        - boom: { fail: "first" }
      recover:
        - worse: { fail: "second" }
""")
    record = harness.record(run_id)
    assert record.status is RunStatus.FAILED
    assert record.error == {"type": "failed", "message": "second", "step": "guarded.worse"}


async def test_if_false_skips_the_step(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: conditional
inputs:
  go: { type: boolean, default: false }
steps:
  - maybe:
      if: "{{ go }}"
      set: { ran: true }
""")
    document = harness.document(run_id)
    assert document["bindings"]["maybe"] == {"skipped": True}
    assert "step.skipped" in harness.history_kinds(run_id)


async def test_exit_names_the_ending(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: exits
steps:
  - decided:
      if: "{{ true }}"
      exit: approved
  - unreachable:
      set: { x: 1 }
""")
    record = harness.record(run_id)
    assert (record.status, record.exit) == (RunStatus.SUCCEEDED, "approved")
    assert "unreachable" not in harness.document(run_id)["bindings"]


async def test_fail_construct_fails_the_run(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: failing
steps:
  - stop:
      fail: "cannot go on"
""")
    record = harness.record(run_id)
    assert record.status is RunStatus.FAILED
    assert record.error == {"type": "failed", "message": "cannot go on", "step": "stop"}
    assert harness.history_kinds(run_id)[-2:] == ["step.failed", "failed"]


async def test_retry_reruns_a_failing_action_after_its_delay(harness: Harness,
                                                              probe: Recorder) -> None:
    probe.results = [StepFailure("flaky"), StepFailure("flaky"), {"status": "ok"}]
    run_id = await run_flow(harness, """
flow: retrying
steps:
  - call:
      probe: {}
      retry: { max: 3, every: 10s, backoff: 2 }
""")
    assert harness.document(run_id)["bindings"]["call"] == {"status": "ok"}
    assert probe.times == [START, START + timedelta(seconds=10), START + timedelta(seconds=30)]
    keys = {ctx.idempotency_key for _, ctx in probe.calls}
    assert len(keys) == 1
    assert [ctx.attempt for _, ctx in probe.calls] == [1, 2, 3]


async def test_retry_exhausted_fails_with_the_last_error(harness: Harness,
                                                        probe: Recorder) -> None:
    probe.results = [ValueError("bad data")]
    run_id = await run_flow(harness, """
flow: retrying
steps:
  - call:
      probe: {}
      retry: { max: 2, every: 1s }
""")
    record = harness.record(run_id)
    assert record.error == {"type": "action-error", "message": "ValueError: bad data",
                            "step": "call"}
    assert len(probe.calls) == 3


async def test_missing_key_fails_the_step_with_its_name(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: typo
inputs:
  deal: { type: object, required: true }
steps:
  - greet:
      log: { message: "hello {{ deal.nmae }}" }
""", {"deal": {"name": "ACME"}})
    record = harness.record(run_id)
    assert record.status is RunStatus.FAILED
    assert record.error is not None
    assert record.error["type"] == "expression"
    assert record.error["step"] == "greet"
    assert "'deal' has no key 'nmae'" in record.error["message"]


async def test_log_writes_history(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: logging
steps:
  - hello:
      log: { message: "hi {{ run.id }}" }
""")
    logs = [e for e in harness.engine.store.history(run_id) if e.kind == "log"]
    assert [e.data for e in logs] == [{"message": f"hi {run_id}"}]


async def test_cancel_a_waiting_run(harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: cancellable
steps:
  - w: { wait: { for: 1d } }
"""))
    await harness.run_due()
    record = harness.engine.cancel(run_id, by="alice")
    assert record.status is RunStatus.CANCELLED
    await harness.run_until_idle()
    assert harness.record(run_id).status is RunStatus.CANCELLED
    assert harness.history_kinds(run_id)[-1] == "cancelled"

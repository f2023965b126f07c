"""Retrying a failed run (SPEC 4.1) through the real engine on a virtual clock, on both stores:
it resumes at the step that failed, on the definition it started with, as a new attempt;
what completed is not run again; corrected inputs count for what is still to run; inside
groups, loops, for_each branches and recover scopes only the failed branch runs again."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext
from tarry.engine.operating import retry_plan
from tarry.errors import InvalidRunRequest, RunStateError
from tarry.model import RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class Calls:
    """Actions that count their calls by a ``key`` argument: ``work`` always succeeds,
    ``flaky`` fails while its key is in ``broken``."""

    def __init__(self) -> None:
        self.made: list[str] = []
        self.broken: set[str] = set()

    def work(self, args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        self.made.append(str(args["key"]))
        return {"done": args["key"]}

    def flaky(self, args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        self.made.append(str(args["key"]))
        if str(args["key"]) in self.broken:
            raise RuntimeError(f"{args['key']} is down")
        return {"done": args["key"], "attempt": ctx.attempt}


@pytest.fixture
def calls() -> Calls:
    return Calls()


@pytest.fixture
def harness(tmp_path: Path, calls: Calls, store_url: str) -> Iterator[Harness]:
    h = Harness(tmp_path, start=START, store_url=store_url,
                actions={"work": calls.work, "flaky": calls.flaky})
    yield h
    h.close()


async def failed_run(harness: Harness, source: str, inputs: dict[str, Any] | None = None
                     ) -> str:
    """Start a run of ``source`` (a flow's YAML, or the name of a flow of the flows folder)
    and let it fail."""
    run_id = harness.start(harness.flow(source) if "\n" in source else source, inputs)
    await harness.run_until_idle()
    assert harness.record(run_id).status is RunStatus.FAILED
    return run_id


async def retried(harness: Harness, run_id: str, **options: Any) -> dict[str, Any]:
    record = harness.engine.retry(run_id, by="alice", **options)
    assert (record.status, record.error, record.due_at) == (RunStatus.PENDING, None,
                                                            harness.clock.now())
    await harness.run_until_idle()
    return harness.document(run_id)


LINE = """
flow: line
inputs:
  region: { type: string, required: true }
steps:
  - first: { work: { key: first } }
  - second: { flaky: { key: "second-{{ region }}" } }
  - third: { work: { key: "third-{{ region }}" } }
"""


async def test_a_retry_resumes_at_the_failed_step_and_keeps_what_completed(
        harness: Harness, calls: Calls) -> None:
    calls.broken = {"second-eu"}
    run_id = await failed_run(harness, LINE, {"region": "eu"})
    assert harness.record(run_id).error == {"type": "action-error", "message":
                                            "RuntimeError: second-eu is down", "step": "second"}
    calls.broken.clear()
    await harness.advance(timedelta(minutes=5))

    document = await retried(harness, run_id, reason="the backend is back")

    assert (document["status"], document["exit"], document["attempt"]) == (
        "succeeded", "completed", 2)
    assert calls.made == ["first", "second-eu", "second-eu", "third-eu"]
    assert document["bindings"]["first"] == {"done": "first"}
    assert document["bindings"]["second"] == {"done": "second-eu", "attempt": 1}
    [entry] = [e for e in document["history"] if e["kind"] == "retried"]
    assert entry == {"at": "2026-03-01T09:05:00.000Z", "kind": "retried", "step": None,
                     "data": {"by": "alice", "reason": "the backend is back"}}


async def test_corrected_inputs_replace_the_old_ones_for_what_is_still_to_run(
        harness: Harness, calls: Calls) -> None:
    calls.broken = {"second-eu"}
    run_id = await failed_run(harness, LINE, {"region": "eu"})

    document = await retried(harness, run_id, inputs={"region": "us"})

    assert document["status"] == "succeeded"
    assert document["inputs"] == {"region": "us"}
    assert calls.made == ["first", "second-eu", "second-us", "third-us"]
    [entry] = [e["data"] for e in document["history"] if e["kind"] == "retried"]
    assert entry == {"by": "alice", "inputs": ["region"]}


async def test_corrected_inputs_the_flow_does_not_take_are_refused_and_nothing_changes(
        harness: Harness, calls: Calls) -> None:
    calls.broken = {"second-eu"}
    run_id = await failed_run(harness, LINE, {"region": "eu"})
    with pytest.raises(InvalidRunRequest, match="regoin"):
        harness.engine.retry(run_id, by="alice", inputs={"regoin": "us"})
    assert harness.record(run_id).status is RunStatus.FAILED
    assert "retried" not in harness.history_kinds(run_id)


async def test_only_a_failed_run_can_be_retried(harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: napping
steps:
  - nap: { wait: { for: 1h } }
"""))
    await harness.run_due()
    with pytest.raises(RunStateError) as caught:
        harness.engine.retry(run_id, by="alice")
    assert str(caught.value) == (f"run {run_id} is waiting: only a failed run can be retried "
                                 "(rerun starts a new run of any run)")
    assert caught.value.details["state"] == "waiting"


async def test_two_retries_of_one_failure_retry_it_once(harness: Harness, calls: Calls) -> None:
    calls.broken = {"second-eu"}
    run_id = await failed_run(harness, LINE, {"region": "eu"})
    record = harness.record(run_id)
    store = harness.engine.store
    plan = retry_plan(record, store.journals([run_id]).get(run_id, []), by="bob", reason=None,
                      now=harness.clock.now())
    harness.engine.retry(run_id, by="alice")

    assert store.retry_runs([plan], harness.clock.now()) == [None]
    with pytest.raises(RunStateError, match="is pending: only a failed run can be retried"):
        harness.engine.retry(run_id, by="bob")
    assert harness.history_kinds(run_id).count("retried") == 1


async def test_a_retried_step_gets_its_whole_retry_policy_again(
        harness: Harness, calls: Calls) -> None:
    calls.broken = {"call"}
    run_id = await failed_run(harness, """
flow: patient
steps:
  - call: { flaky: { key: call }, retry: { max: 2, every: 1m } }
""")
    assert calls.made == ["call"] * 3
    calls.made.clear()

    document = await retried(harness, run_id)

    assert document["status"] == "failed"  # still down: three attempts again
    assert calls.made == ["call"] * 3
    assert document["attempt"] == 2
    calls.broken.clear()
    document = await retried(harness, run_id)
    assert (document["status"], document["attempt"]) == ("succeeded", 3)


async def test_in_a_group_the_steps_before_the_failed_one_are_not_run_again(
        harness: Harness, calls: Calls) -> None:
    calls.broken = {"inner"}
    run_id = await failed_run(harness, """
flow: grouped
steps:
  - outer:
      steps:
        - before: { work: { key: before } }
        - inner: { flaky: { key: inner } }
  - after: { work: { key: after } }
""")
    assert harness.record(run_id).error["step"] == "outer.inner"
    calls.broken.clear()

    document = await retried(harness, run_id)

    assert document["status"] == "succeeded"
    assert calls.made == ["before", "inner", "inner", "after"]


async def test_in_a_for_each_only_the_failed_branch_runs_again(
        harness: Harness, calls: Calls) -> None:
    calls.broken = {"b"}
    run_id = await failed_run(harness, """
flow: fanned
steps:
  - each:
      for_each: "{{ ['a', 'b', 'c'] }}"
      concurrency: 1
      steps:
        - prepare: { work: { key: "prepare-{{ item }}" } }
        - call: { flaky: { key: "{{ item }}" } }
""")
    assert harness.record(run_id).error["step"] == "each[1].call"
    calls.broken.clear()

    document = await retried(harness, run_id)

    assert document["status"] == "succeeded"
    assert calls.made == ["prepare-a", "a", "prepare-b", "b", "b", "prepare-c", "c"]
    assert [each["call"]["done"] for each in document["bindings"]["each"]] == ["a", "b", "c"]


async def test_a_for_each_that_tolerates_failures_counts_the_retried_one_once(
        harness: Harness, calls: Calls) -> None:
    calls.broken = {"a", "b"}
    run_id = await failed_run(harness, """
flow: tolerant
steps:
  - each:
      for_each: "{{ ['a', 'b', 'c'] }}"
      concurrency: 1
      tolerate: 1
      steps:
        - call: { flaky: { key: "{{ item }}" } }
""")
    calls.broken = {"a"}

    document = await retried(harness, run_id)

    assert document["status"] == "succeeded"
    assert calls.made == ["a", "b", "b", "c"]
    assert document["bindings"]["each"][0]["failed"] is True


async def test_in_a_recover_scope_only_the_failed_recover_step_runs_again(
        harness: Harness, calls: Calls) -> None:
    calls.broken = {"main", "notify"}
    run_id = await failed_run(harness, """
flow: recovering
steps:
  - main: { flaky: { key: main } }
recover:
  - undo: { work: { key: undo } }
  - notify: { flaky: { key: notify } }
""")
    assert harness.record(run_id).error["step"] == "notify"
    calls.broken = {"main"}

    document = await retried(harness, run_id)

    assert document["status"] == "succeeded"
    assert calls.made == ["main", "undo", "notify", "notify"]


async def test_inside_a_repeat_only_the_failed_iteration_step_runs_again(
        harness: Harness, calls: Calls) -> None:
    calls.broken = {"check-1"}
    run_id = await failed_run(harness, """
flow: polling
steps:
  - poll:
      repeat: { max: 3, every: 1m, until: "{{ check.done == 'check-2' }}" }
      steps:
        - mark: { work: { key: "mark-{{ loop.index }}" } }
        - check: { flaky: { key: "check-{{ loop.index }}" } }
""")
    calls.broken.clear()

    document = await retried(harness, run_id)

    assert document["status"] == "succeeded"
    assert calls.made == ["mark-0", "check-0", "mark-1", "check-1", "check-1", "mark-2",
                          "check-2"]


async def test_a_retry_runs_on_the_definition_the_run_started_with(
        harness: Harness, calls: Calls) -> None:
    (harness.directory / "flows").mkdir()
    flow_file = harness.directory / "flows" / "line.yaml"
    flow_file.write_text(LINE)
    calls.broken = {"second-eu"}
    run_id = await failed_run(harness, "line", {"region": "eu"})
    flow_file.write_text(LINE.replace("key: \"third-", "key: \"changed-"))
    calls.broken.clear()

    document = await retried(harness, run_id)

    assert document["status"] == "succeeded"
    assert calls.made[-1] == "third-eu"

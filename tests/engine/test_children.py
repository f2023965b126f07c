"""Child flows (``call``) through the real engine on a virtual clock, on both stores: the
child started with the parent's checkpoint, the parent woken by the transaction that ends
the child, the binding, failures (``child-failed``, ``optional``, ``recover``), the timeout
(the child cancelled), the cancel cascade, nested and held children, parallel calls, and the
links both ways."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry.model import RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

CHILDREN = {
    "greet": """
flow: greet
inputs:
  name: { type: string, required: true }
steps:
  - nap:
      wait: { for: 2h }
  - hello:
      set: { text: "hello {{ name }}" }
  - done:
      exit: greeted
""",
    "broken": """
flow: broken
steps:
  - boom:
      fail: "no luck"
""",
    "sleepy": """
flow: sleepy
steps:
  - nap:
      wait: { for: 30d }
""",
    "middle": """
flow: middle
inputs:
  name: { type: string, required: true }
steps:
  - inner:
      call: { flow: greet, inputs: { name: "{{ name }}!" } }
""",
    "gated": """
flow: gated
hold:
  - after: "2026-03-02T09:00:00Z"
steps:
  - hi:
      set: { ok: true }
""",
}

PARENT = """
flow: parent
inputs:
  who: { type: string, default: ada }
steps:
  - kid:
      call: { flow: greet, inputs: { name: "{{ who }}" }, target: "t-{{ who }}" }
  - after:
      set: { said: "{{ kid.status }} {{ kid.exit }} {{ kid.run }}" }
"""


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    flows = tmp_path / "flows"
    flows.mkdir()
    for name, source in CHILDREN.items():
        (flows / f"{name}.yaml").write_text(source)
    h = Harness(tmp_path, start=START, store_url=store_url)
    yield h
    h.close()


def kinds(harness: Harness, run_id: str, kind: str) -> list[dict[str, Any]]:
    return [e.data for e in harness.engine.store.history(run_id) if e.kind == kind]


def child_of(harness: Harness, run_id: str) -> str:
    [child] = harness.engine.store.children(run_id)
    return child


async def test_the_parent_waits_for_its_child_with_no_deadline(harness: Harness) -> None:
    parent = harness.start(harness.flow(PARENT))
    await harness.run_due()
    child = child_of(harness, parent)
    record = harness.record(parent)
    assert record.status is RunStatus.WAITING
    assert record.due_at is None  # no polling: the child's end wakes it
    assert record.waiting_for == {"kind": "child", "step": "kid", "until": None,
                                  "event_type": None, "match": None,
                                  "since": "2026-03-01T09:00:00.000Z", "run": child,
                                  "others": 0}
    kid = harness.record(child)
    assert (kid.flow, kid.target, kid.inputs, kid.parent_id) == (
        "greet", "t-ada", {"name": "ada"}, parent)
    assert kinds(harness, parent, "child.started") == [{"run": child, "flow": "greet"}]
    assert harness.engine.store.history(child)[0].data == {
        "target": "t-ada", "parent": parent, "step": "kid"}


async def test_the_childs_end_wakes_the_parent_and_binds_its_outcome(harness: Harness) -> None:
    parent = harness.start(harness.flow(PARENT))
    await harness.run_due()
    child = child_of(harness, parent)
    await harness.advance(timedelta(hours=2))  # the child's nap ends, and so does the child
    assert harness.record(child).status is RunStatus.SUCCEEDED
    document = harness.document(parent)
    assert document["status"] == "succeeded"
    assert document["bindings"]["kid"] == {"status": "succeeded", "exit": "greeted",
                                           "result": None, "error": None, "run": child}
    assert document["bindings"]["after"] == {"said": f"succeeded greeted {child}"}
    assert document["children"] == [child]
    assert document["parent"] is None
    kid = harness.document(child)
    assert (kid["parent"], kid["children"]) == (parent, [])
    assert kinds(harness, parent, "child.ended") == [{"run": child, "status": "succeeded"}]
    assert harness.clock.now() == START + timedelta(hours=2)


FAILING = """
flow: failing
steps:
  - kid:
      call: { flow: broken }
  - never:
      set: { reached: true }
"""


async def test_a_failed_child_fails_the_step_as_child_failed(harness: Harness) -> None:
    parent = harness.start(harness.flow(FAILING))
    await harness.run_until_idle()
    child = child_of(harness, parent)
    document = harness.document(parent)
    assert document["status"] == "failed"
    assert document["error"] == {
        "type": "child-failed", "step": "kid",
        "message": f"child run {child} failed: failed: no luck"}


OPTIONAL = """
flow: optional
steps:
  - kid:
      call: { flow: broken }
      optional: true
  - after:
      set: { failed: "{{ kid.failed }}" }
"""


async def test_an_optional_call_binds_the_failure_and_goes_on(harness: Harness) -> None:
    parent = harness.start(harness.flow(OPTIONAL))
    await harness.run_until_idle()
    child = child_of(harness, parent)
    document = harness.document(parent)
    assert document["status"] == "succeeded"
    assert document["bindings"]["kid"] == {"failed": True, "error": {
        "type": "child-failed", "message": f"child run {child} failed: failed: no luck"}}


RECOVERED = """
flow: recovered
steps:
  - kid:
      call: { flow: broken }
recover:
  - noted:
      set: { type: "{{ error.type }}", step: "{{ error.step }}" }
"""


async def test_recover_runs_after_a_failed_child(harness: Harness) -> None:
    parent = harness.start(harness.flow(RECOVERED))
    await harness.run_until_idle()
    document = harness.document(parent)
    assert document["status"] == "succeeded"
    assert document["bindings"]["noted"] == {"type": "child-failed", "step": "kid"}


TIMED = """
flow: timed
steps:
  - kid:
      call: { flow: sleepy }
      timeout: 1d
  - after:
      set: { status: "{{ kid.status }}" }
"""


async def test_a_timeout_is_a_value_and_cancels_the_child(harness: Harness) -> None:
    parent = harness.start(harness.flow(TIMED))
    await harness.run_due()
    child = child_of(harness, parent)
    assert harness.record(parent).due_at == START + timedelta(days=1)
    await harness.run_until_idle()
    document = harness.document(parent)
    assert document["status"] == "succeeded"
    assert document["bindings"]["kid"] == {"status": "timeout", "exit": None, "result": None,
                                           "error": None, "run": child}
    kid = harness.record(child)
    assert (kid.status, kid.cancelled_by) == (RunStatus.CANCELLED, "parent")
    assert kinds(harness, child, "cancelled") == [{
        "by": "parent",
        "reason": "its parent stopped waiting for it (the call's timeout)"}]
    assert kinds(harness, parent, "event.ignored") == []  # the parent was not told


async def test_cancelling_the_parent_cancels_its_children_recursively(
        harness: Harness) -> None:
    source = """
flow: grand
steps:
  - kid:
      call: { flow: middle, inputs: { name: x } }
"""
    parent = harness.start(harness.flow(source))
    await harness.run_due()
    await harness.run_due()
    middle = child_of(harness, parent)
    grandchild = child_of(harness, middle)
    harness.engine.cancel(parent, by="ops", reason="wrong customer")
    for run_id in (parent, middle, grandchild):
        assert harness.record(run_id).status is RunStatus.CANCELLED
    assert kinds(harness, middle, "cancelled") == [{
        "by": "parent", "reason": "its parent run was cancelled by ops: wrong customer"}]
    assert kinds(harness, grandchild, "cancelled") == [{
        "by": "parent", "reason": "its parent run was cancelled by ops: wrong customer"}]


async def test_cancelling_a_child_fails_its_parents_step(harness: Harness) -> None:
    parent = harness.start(harness.flow(PARENT))
    await harness.run_due()
    child = child_of(harness, parent)
    harness.engine.cancel(child, by="ops", reason="not needed")
    assert harness.record(parent).due_at == START  # woken by the cancel's transaction
    await harness.run_due()
    document = harness.document(parent)
    assert document["status"] == "failed"
    assert document["error"]["type"] == "child-failed"
    assert document["error"]["message"] == f"child run {child} cancelled"


async def test_a_child_that_calls_a_child(harness: Harness) -> None:
    source = """
flow: grand
steps:
  - kid:
      call: { flow: middle, inputs: { name: x } }
"""
    parent = harness.start(harness.flow(source))
    await harness.run_until_idle()
    middle = child_of(harness, parent)
    grandchild = child_of(harness, middle)
    assert harness.document(parent)["status"] == "succeeded"
    assert harness.document(middle)["bindings"]["inner"]["exit"] == "greeted"
    assert harness.record(grandchild).inputs == {"name": "x!"}
    assert harness.clock.now() == START + timedelta(hours=2)


async def test_a_held_child_starts_when_its_hold_clears(harness: Harness) -> None:
    source = """
flow: waits-for-gate
steps:
  - kid:
      call: { flow: gated }
"""
    parent = harness.start(harness.flow(source))
    await harness.run_due()
    child = child_of(harness, parent)
    assert harness.record(child).status is RunStatus.HELD
    await harness.run_until_idle()
    assert harness.record(child).status is RunStatus.SUCCEEDED
    assert harness.document(parent)["status"] == "succeeded"
    assert harness.clock.now() == datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


async def test_a_for_each_calls_children_in_parallel(harness: Harness) -> None:
    source = """
flow: fan-out
steps:
  - each:
      for_each: [a, b, c]
      as: who
      concurrency: 3
      steps:
        - kid:
            call: { flow: greet, inputs: { name: "{{ who }}" } }
"""
    parent = harness.start(harness.flow(source))
    await harness.run_due()
    children = harness.engine.store.children(parent)
    assert len(children) == 3
    assert sorted(harness.record(c).inputs["name"] for c in children) == ["a", "b", "c"]
    record = harness.record(parent)
    assert record.waiting_for is not None
    assert record.waiting_for["others"] == 2
    await harness.run_until_idle()
    document = harness.document(parent)
    assert document["status"] == "succeeded"
    assert [b["kid"]["exit"] for b in document["bindings"]["each"]] == ["greeted"] * 3
    assert harness.clock.now() == START + timedelta(hours=2)


async def test_a_flow_that_does_not_exist_fails_the_step(harness: Harness) -> None:
    source = """
flow: lost
steps:
  - kid:
      call: { flow: greeet }
"""
    parent = harness.start(harness.flow(source))
    await harness.run_due()
    document = harness.document(parent)
    assert document["status"] == "failed"
    assert document["error"]["type"] == "child-not-started"
    assert document["error"]["message"].startswith("no flow named 'greeet' among the project's "
                                                   "flows (did you mean 'greet'?)")
    assert harness.engine.store.children(parent) == []


async def test_inputs_that_do_not_fit_fail_the_step(harness: Harness) -> None:
    source = """
flow: unfit
steps:
  - kid:
      call: { flow: greet, inputs: { nmae: x } }
"""
    parent = harness.start(harness.flow(source))
    await harness.run_due()
    document = harness.document(parent)
    assert document["status"] == "failed"
    assert document["error"]["type"] == "child-not-started"
    assert harness.engine.store.children(parent) == []

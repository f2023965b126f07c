"""The ``emit`` action (SPEC 3.3): a flow sends an event into its own engine."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext, idempotency_key
from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.model import EventState, RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

MANIFESTS = """
events:
  slack.approval:
    correlate_on: [message]
    schema:
      type: object
      required: [message, approved]
"""

WAITER = """
flow: waiter
steps:
  - approval:
      wait_for: slack.approval
      match: { message: "deal-7" }
      timeout: 1d
  - decided:
      if: "{{ approval.status == 'received' and approval.event.approved }}"
      exit: approved
"""

APPROVER = """
flow: approver
steps:
  - tell:
      emit: { type: slack.approval, data: { message: "deal-7", approved: true } }
"""


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    h = Harness(tmp_path, start=START, manifests=MANIFESTS, store_url=store_url)
    yield h
    h.close()


async def run_flow(harness: Harness, source: str, inputs: dict[str, Any] | None = None) -> str:
    run_id = harness.start(harness.flow(source), inputs)
    await harness.run_due()
    return run_id


def emitter(step: str) -> str:
    """A flow whose one step ``tell`` is ``emit: <step>`` (a flow mapping)."""
    return f"flow: emitter\ninputs:\n  kind: {{ default: slack.approval }}\nsteps:\n" \
           f"  - tell:\n      emit: {step}\n"


async def test_an_emitted_event_resumes_the_run_waiting_for_it(harness: Harness) -> None:
    waiter = await run_flow(harness, WAITER)
    approver = await run_flow(harness, APPROVER)
    await harness.run_due()
    assert (harness.record(waiter).status, harness.record(waiter).exit) == (
        RunStatus.SUCCEEDED, "approved")
    binding = harness.document(approver)["bindings"]["tell"]
    assert binding == {
        "id": f"emit-{idempotency_key(approver, 'tell')}", "type": "slack.approval",
        "state": "delivered", "runs": [waiter], "started": [], "errors": [],
        "data": {"message": "deal-7", "approved": True},
        "received_at": "2026-03-01T09:00:00.000Z", "buffer_until": None}


async def test_an_event_emitted_before_the_wait_is_buffered_for_it(harness: Harness) -> None:
    approver = await run_flow(harness, APPROVER)
    binding = harness.document(approver)["bindings"]["tell"]
    assert (binding["state"], binding["buffer_until"]) == ("buffered", "2026-03-01T09:05:00.000Z")
    waiter = await run_flow(harness, WAITER)
    await harness.run_due()
    assert harness.record(waiter).exit == "approved"


async def test_a_given_id_is_the_event_id(harness: Harness) -> None:
    run_id = await run_flow(harness, emitter(
        '{ type: slack.approval, id: "{{ run.id }}-ok", data: { message: m, approved: true } }'))
    assert harness.document(run_id)["bindings"]["tell"]["id"] == f"{run_id}-ok"


async def test_a_rerun_of_the_step_is_a_harmless_duplicate(harness: Harness) -> None:
    ctx = ActionContext(run_id="r1", step_path="tell", attempt=1,
                        idempotency_key=idempotency_key("r1", "tell"), now=START)
    args = {"type": "slack.approval", "data": {"message": "m", "approved": True}}
    first = await harness.engine.actions.call("emit", args, ctx)
    again = await harness.engine.actions.call("emit", args, ctx)
    assert (first["state"], again["state"]) == ("buffered", "duplicate")
    assert first["id"] == again["id"]
    assert [event.id for event in harness.engine.events()] == [first["id"]]


async def test_an_unknown_type_fails_the_step(harness: Harness) -> None:
    run_id = await run_flow(harness, emitter(
        '{ type: "{{ kind }}", data: { message: m } }'), {"kind": "slack.aproval"})
    assert harness.document(run_id)["error"] == {
        "type": "event", "step": "tell",
        "message": "unknown event type 'slack.aproval' (did you mean 'slack.approval'?); "
                   "declare it in events.yaml"}


async def test_an_invalid_payload_fails_the_step_and_is_quarantined(harness: Harness) -> None:
    run_id = await run_flow(harness, emitter("{ type: slack.approval, data: { message: m } }"))
    event_id = f"emit-{idempotency_key(run_id, 'tell')}"
    assert harness.document(run_id)["error"] == {
        "type": "event", "step": "tell",
        "message": f"event '{event_id}' of type 'slack.approval' is invalid: "
                   "'approved' is a required property"}
    assert [e.id for e in harness.engine.events(state=EventState.INVALID)] == [event_id]


@pytest.mark.parametrize(("step", "message"), [
    ('{ type: slack.approval, data: "{{ [1] }}" }',
     "emit needs 'data', a JSON object, got a list"),
    ("{ type: slack.approval, data: {}, id: '' }",
     "the 'id' of emit must be a non-empty string, got a string"),
])
async def test_bad_computed_arguments_fail_the_step(harness: Harness, step: str,
                                                    message: str) -> None:
    run_id = await run_flow(harness, emitter(step))
    assert harness.document(run_id)["error"] == {"type": "event", "step": "tell",
                                                 "message": message}


async def test_a_numeric_id_is_used_as_text(harness: Harness) -> None:
    run_id = await run_flow(harness, emitter(
        "{ type: slack.approval, id: 42, data: { message: m, approved: true } }"))
    assert harness.document(run_id)["bindings"]["tell"]["id"] == "42"


async def test_a_stub_named_emit_replaces_the_built_in(tmp_path: Path) -> None:
    def stub(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        return {"stubbed": True}

    harness = Harness(tmp_path, start=START, actions={"emit": stub})
    try:
        run_id = await run_flow(harness, APPROVER)
        assert harness.document(run_id)["bindings"]["tell"] == {"stubbed": True}
    finally:
        harness.close()


async def test_an_engine_from_settings_emits_through_its_own_send(tmp_path: Path) -> None:
    (tmp_path / "tarry.toml").write_text(
        f'[tarry]\ndatabase = "sqlite:///{tmp_path}/tarry.db"\n', encoding="utf-8")
    (tmp_path / "events.yaml").write_text(MANIFESTS, encoding="utf-8")
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "approver.yaml").write_text(APPROVER, encoding="utf-8")
    engine = Engine.from_settings(load_settings(cwd=tmp_path, env={}))
    try:
        run_id = engine.start("approver").id
        await engine.drive(run_id)
        assert engine.document(run_id)["bindings"]["tell"]["state"] == "buffered"
        assert [event.type for event in engine.events()] == ["slack.approval"]
    finally:
        engine.close()


async def test_a_run_can_emit_the_event_its_other_branch_waits_for(harness: Harness) -> None:
    run_id = await run_flow(harness, """
flow: self-signal
steps:
  - branches:
      for_each: ["wait", "tell"]
      concurrency: 2
      steps:
        - approval:
            if: "{{ item == 'wait' }}"
            wait_for: slack.approval
            match: { message: "self" }
            timeout: 1h
        - tell:
            if: "{{ item == 'tell' }}"
            emit: { type: slack.approval, data: { message: "self", approved: true } }
""")
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert document["status"] == "succeeded"
    assert document["bindings"]["branches"][0]["approval"]["status"] == "received"
    assert harness.clock.now() == START

"""The walk does no I/O: where it needs an action with effects run (or the journal read), it
answers with commands, and walks on once the executor has recorded what they came to. Tested
here without a store, a worker or an executor: the test plays the executor's part."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tarry.actions import ActionContext, ActionRegistry
from tarry.engine.builtins import register_builtins
from tarry.engine.commands import ActionFailed, RunAction
from tarry.engine.interpreter import Env, Interpreter
from tarry.engine.outcome import Blocked, Done, Failed, Pending
from tarry.language.loader import parse_flow

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

FLOW = """\
flow: calls
steps:
  - first: { charge: { amount: 3 } }
  - note: { set: { paid: "{{ first.ok }}" } }
  - fan:
      for_each: [a, b]
      concurrency: 2
      steps:
        - each: { charge: { amount: "{{ item }}" } }
"""

RETRIED = """\
flow: retried
steps:
  - first:
      charge: { amount: 1 }
      retry: { max: 2, every: 1m }
"""


def _refuse(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    raise AssertionError("the walk called an action with effects itself")


async def _no_checkpoint() -> None:
    raise AssertionError("the walk checkpointed")


def _env(source: str) -> Env:
    actions = ActionRegistry()
    register_builtins(actions)
    actions.register("charge", _refuse)
    flow = parse_flow(source, "flow.yaml", actions=actions.declared_arguments())
    return Env(run_id="r1", flow=flow, now=NOW, inputs={}, run_info={"id": "r1"},
               actions=actions, checkpoint=_no_checkpoint)


def _asked(outcome: Any) -> list[RunAction]:
    assert isinstance(outcome, Pending)
    assert all(isinstance(command, RunAction) for command in outcome.commands)
    return list(outcome.commands)  # type: ignore[arg-type]


async def test_the_walk_asks_for_each_action_once_and_goes_on_with_its_result() -> None:
    env = _env(FLOW)
    walker, state = Interpreter(env), {}
    [charge] = _asked(await walker.advance(state))
    assert (charge.path, charge.name, charge.args, charge.context.attempt) == (
        "first", "charge", {"amount": 3}, 1)
    assert _asked(await walker.advance(state)) == []  # under way: not asked again
    charge.cur["result"] = {"ok": True}  # what the executor records (then checkpoints)
    env.in_flight.discard(charge.path)
    branches = _asked(await walker.advance(state))  # `set` ran inline; both branches ask
    assert [(c.path, c.args) for c in branches] == [("fan[0].each", {"amount": "a"}),
                                                     ("fan[1].each", {"amount": "b"})]
    for command, value in zip(branches, ("A", "B"), strict=True):
        command.cur["result"] = {"v": value}
        env.in_flight.discard(command.path)
    outcome = await walker.advance(state)
    assert isinstance(outcome, Done)
    assert state["root"]["b"]["note"] == {"paid": True}
    assert [b["each"] for b in state["root"]["b"]["fan"]] == [{"v": "A"}, {"v": "B"}]


async def test_a_failure_the_executor_hands_back_is_retried_by_the_step_then_fails_it() -> None:
    env = _env(RETRIED)
    walker, state = Interpreter(env), {}
    [first] = _asked(await walker.advance(state))
    env.in_flight.discard(first.path)
    env.failures[first.path] = ActionFailed("action-error", "down", first.context.attempt)
    blocked = await walker.advance(state)
    assert isinstance(blocked, Blocked)
    assert [(w.kind, w.step) for w in blocked.waits] == [("retry", "first")]
    env.now = blocked.wake_at
    [again] = _asked(await walker.advance(state))
    assert again.context.attempt == 2
    env.in_flight.discard(again.path)
    env.failures[again.path] = ActionFailed("value", "not storable", 2, retryable=False)
    failed = await walker.advance(state)
    assert isinstance(failed, Failed)
    assert failed.error == {"type": "value", "message": "not storable", "step": "first"}

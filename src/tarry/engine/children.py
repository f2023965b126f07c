"""``call``: a step that starts a child run of another flow and waits for it to end.

On entry the step renders the child's inputs, target and deadline and asks the executor to
prepare the child (:class:`~tarry.engine.commands.StartChild`); the run's next checkpoint
writes the step's state, which names the child, and creates the child, in one transaction:
a child is started once, however the parent's worker dies. The step then waits (``child``,
with no deadline unless it has a ``timeout``). The transaction that ends the child (any
end: succeeded, failed, cancelled, refused) puts its outcome in the parent's inbox under the
step's path and wakes the parent.

Binds ``{status, exit, result, error, run}``: ``status`` is the child's (or ``timeout``).
A child that did not succeed fails the step (``child-failed``), to which ``optional`` and
``recover`` apply; a timeout is a value, and the child is cancelled (recorded on it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tarry._text import clip
from tarry.clock import from_iso, iso
from tarry.engine.commands import StartChild
from tarry.engine.frames import since
from tarry.engine.outcome import Blocked, Done, Outcome, Pending, WaitInfo, step_error
from tarry.engine.values import to_json
from tarry.errors import ExpressionError
from tarry.language.model import Call, Step
from tarry.model import CHILD_INBOX_TYPE

if TYPE_CHECKING:
    from tarry.engine.interpreter import Env, Interpreter, Names

__all__ = ["CHILD_FAILED", "child_binding", "child_outcome", "run_call", "take_child_end",
           "timeout_binding"]

CHILD_FAILED = "child-failed"
"""The error type of a step whose child run did not succeed."""


def child_binding(ended: dict[str, Any]) -> dict[str, Any]:
    """The binding of a child's end, as the transaction that ended it reported it."""
    return {"status": ended.get("status"), "exit": ended.get("exit"),
            "result": ended.get("result"), "error": ended.get("error"),
            "run": ended.get("run")}


def timeout_binding(run_id: str) -> dict[str, Any]:
    """The binding of a call whose deadline passed before its child ended."""
    return {"status": "timeout", "exit": None, "result": None, "error": None, "run": run_id}


def child_outcome(ended: dict[str, Any], path: str) -> Outcome:
    """What a child's end makes of the step at ``path``: its binding, or ``child-failed``."""
    binding = child_binding(ended)
    if binding["status"] == "succeeded":
        return Done(binding)
    return step_error(CHILD_FAILED, failure_message(binding), path)


def failure_message(binding: dict[str, Any]) -> str:
    """Why the step failed, in the child's words."""
    status, run = binding["status"], binding["run"]
    error = binding.get("error") or {}
    why = f": {error.get('type')}: {error.get('message')}" if error else ""
    return f"child run {run} {status}{why}"


async def run_call(walker: Interpreter, step: Step, cur: dict[str, Any], names: Names,
                   path: str) -> Outcome:
    """Advance a ``call`` step (see the module docstring)."""
    call = step.construct
    assert isinstance(call, Call)
    env = walker.env
    if "child" not in cur:
        return _start(walker, call, cur, names, path)
    child = str(cur["child"])
    ended = take_child_end(env, child, path)
    if ended is not None:
        env.record("child.ended", path, run=child, status=ended.get("status"))
        return child_outcome(ended, path)
    until = from_iso(cur["until"]) if cur.get("until") else None
    if until is not None and env.now >= until:
        env.record("wait.timeout", path, until=cur["until"], run=child)
        env.give_up_child(child)
        return Done(timeout_binding(child))
    return Blocked((WaitInfo("child", path, until, since=since(cur), run=child),))


def _start(walker: Interpreter, call: Call, cur: dict[str, Any], names: Names,
           path: str) -> Outcome:
    env = walker.env
    failed = env.failures.pop(path, None)
    if failed is not None:
        return step_error(failed.kind, failed.message, path)
    if path in env.in_flight:
        return Pending()
    inputs = to_json(walker.render(call.inputs, names))
    target = None if call.target is None else to_json(walker.render(call.target, names))
    if target is not None and not isinstance(target, str):
        raise ExpressionError(f"'target' must give text, got {clip(repr(target), 60)}")
    if call.timeout is not None:
        cur["until"] = iso(walker.deadline(call.timeout, names))
    cur["since"] = iso(env.now)
    env.in_flight.add(path)
    return Pending((StartChild(path, call.flow, inputs, target, cur),))


def take_child_end(env: Env, child: str, path: str) -> dict[str, Any] | None:
    """The end of ``child`` if it was delivered to the step at ``path`` (consumed)."""
    for delivered in env.inbox.pop(path, []):
        env.consumed.append(delivered["inbox_id"])
        if delivered["type"] == CHILD_INBOX_TYPE and delivered["id"] == child:
            data: dict[str, Any] = delivered["data"]
            return data
    return None

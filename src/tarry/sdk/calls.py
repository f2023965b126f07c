"""``ctx.call``: a child run of another flow from a Python flow, the same child as the YAML
``call`` step: created with the run's checkpoint, waited for without a deadline (or until
``timeout``), its end delivered by the transaction that ends it.

The operation's journal entry keeps the child's id (``child``), its deadline if any
(``until``) and, once it ended, its ``outcome``: ``{status, exit, result, error, run}``. A
child that did not succeed raises :class:`~tarry.errors.ChildFailedError` (uncaught, the run
fails ``child-failed``); a timeout is a value, and the child is cancelled.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from tarry.clock import from_iso, iso
from tarry.engine.children import child_binding, take_child_end, timeout_binding
from tarry.engine.commands import StartChild
from tarry.engine.frames import since
from tarry.engine.outcome import WaitInfo
from tarry.errors import ChildFailedError
from tarry.sdk.asks import deadline_of
from tarry.sdk.operations import FlowRun
from tarry.sdk.replay import Scope
from tarry.sdk.serializers import Codec

__all__ = ["call"]


async def call(run: FlowRun, scope: Scope, flow: str, inputs: Mapping[str, Any], *,
               target: str | None, timeout: timedelta | str | datetime | None
               ) -> dict[str, Any]:
    """Start a child run of ``flow`` (once) and suspend until it ends or ``timeout``."""
    op = scope.enter("call", None)
    entry = op.entry
    where = f"call '{op.path}'"
    if entry is None:
        if not isinstance(flow, str) or not flow:
            raise TypeError(f"{where}: the flow must be a flow's name, got {flow!r}")
        if target is not None and not isinstance(target, str):
            raise TypeError(f"{where}: target must be a string, got {target!r}")
        values = Codec.plain(dict(inputs), f"the inputs of {where}")
        fields: dict[str, Any] = {"flow": flow, "since": iso(run.env.now)}
        if timeout is not None:
            deadline = deadline_of(timeout, where)
            fields["until"] = iso(deadline if isinstance(deadline, datetime)
                                  else run.env.now + deadline)
        entry = op.record(fields)
        run.record("step.started", op.path)
        run.env.start_child(StartChild(op.path, flow, values, target, entry))
        failed = run.env.failures.pop(op.path, None)
        if failed is not None:
            entry["outcome"] = {"status": "not-started", "exit": None, "result": None,
                                "error": {"type": failed.kind, "message": failed.message,
                                          "step": None}, "run": None}
    if "outcome" not in entry:
        entry["outcome"] = _ended(run, scope, op.path, entry)
        run.record("step.completed", op.path)
    outcome = dict(Codec.copy(entry["outcome"]))
    if outcome["status"] not in ("succeeded", "timeout"):
        raise ChildFailedError(op.path, outcome["run"], outcome["status"], outcome["error"])
    return outcome


def _ended(run: FlowRun, scope: Scope, path: str, entry: dict[str, Any]) -> dict[str, Any]:
    """The child's end if it came (or the timeout's binding once its deadline passed);
    suspends otherwise."""
    child = str(entry["child"])
    ended = take_child_end(run.env, child, path)
    if ended is not None:
        run.record("child.ended", path, run=child, status=ended.get("status"))
        return child_binding(ended)
    until = from_iso(entry["until"]) if entry.get("until") else None
    if until is not None and run.env.now >= until:
        run.record("wait.timeout", path, until=entry["until"], run=child)
        run.env.give_up_child(child)
        return timeout_binding(child)
    scope.suspend(WaitInfo("child", path, until, since=since(entry), run=child))
    raise AssertionError("unreachable: suspend raises")

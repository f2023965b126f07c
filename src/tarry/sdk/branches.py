"""``ctx.parallel`` and ``ctx.map``: branches that run concurrently and suspend independently.

Each branch runs with a context of its own (a :class:`~tarry.sdk.replay.Scope` whose
operation paths begin ``<name>[<index>].``), so its operations are matched within the branch
whatever the interleaving. When the branches have all stopped, the operation:

- raises the first (by index) exception a branch raised, if any;
- else suspends on every wait of every suspended branch (the run is blocked on their union:
  it wakes for whichever is due first, and branches not due suspend again);
- else returns the branches' results, in order.

A finished branch's result is recorded (``{"branches": 3, "done": {"0": …}}``) and the branch
is never run again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from tarry.engine.outcome import WaitInfo
from tarry.errors import NondeterminismError
from tarry.sdk.operations import FlowRun, Teardown
from tarry.sdk.replay import Operation, Scope, Suspend, describe

__all__ = ["Branch", "run_branches"]

Branch = Callable[[Scope], Awaitable[Any]]
"""One branch: given its scope, runs its code to its value."""


class _Escaped(Exception):
    """A ``SystemExit`` or ``KeyboardInterrupt`` a branch's own code raised, carried out of
    its task as an ordinary exception: asyncio raises those two out of the worker's loop."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


async def run_branches(run: FlowRun, scope: Scope, kind: str, name: str | None,
                       branches: Sequence[Branch]) -> list[Any]:
    """Run ``branches`` as the operation ``kind`` (``parallel`` or ``map``) of ``scope``."""
    op = scope.enter(kind, name)
    entry = op.entry
    if entry is None:
        entry = op.record({"branches": len(branches), "done": {}})
        run.record("step.started", op.path)
    elif entry["branches"] != len(branches):
        raise _count_changed(scope, op, entry["branches"], len(branches))
    done: dict[str, Any] = entry["done"]
    pending = [index for index in range(len(branches)) if str(index) not in done]
    if pending:
        with scope.running(op):
            await _run_pending(run, scope, op, branches, pending=pending, done=done)
        run.record("step.completed", op.path)
    return [run.codec.load(done[str(index)]) for index in range(len(branches))]


async def _run_pending(run: FlowRun, scope: Scope, op: Operation, branches: Sequence[Branch], *,
                       pending: list[int], done: dict[str, Any]) -> None:
    async def run_one(index: int) -> Any:
        path = f"{op.path}[{index}]"
        branch_scope = Scope(run.journal, path + ".", f"branch '{path}'")
        try:
            value = await branches[index](branch_scope)
        except (SystemExit, KeyboardInterrupt) as exc:
            raise _Escaped(exc) from None
        branch_scope.finish()
        return run.codec.store(value, f"the result of branch '{path}'")

    endings = await asyncio.gather(*(run_one(index) for index in pending),
                                   return_exceptions=True)
    waits: list[WaitInfo] = []
    suspended = False
    failure: BaseException | None = None
    for index, ending in zip(pending, endings, strict=True):
        if isinstance(ending, Teardown):
            raise ending
        if isinstance(ending, Suspend):
            suspended = True  # a dry replay's branch stops waiting for nothing
            waits.extend(ending.waits)
        elif isinstance(ending, _Escaped):
            failure = failure or ending.original
        elif isinstance(ending, BaseException):
            failure = failure or ending
        else:
            done[str(index)] = ending
    if failure is not None:
        raise failure
    if suspended:
        scope.suspend(*waits)


def _count_changed(scope: Scope, op: Operation, recorded: int,
                   requested: int) -> NondeterminismError:
    name = op.path.removeprefix(scope.prefix)
    position = next(index for index, (_, each) in enumerate(scope.journal.order(scope.prefix))
                    if each == name)
    return scope.changed(position, f"{describe(op.kind, name)} with {recorded} branches",
                         f"{describe(op.kind, name)} with {requested} branches", name)

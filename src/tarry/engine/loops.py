"""The looping constructs: ``repeat`` (bounded polling) and ``for_each`` (iteration).

Both bind their id to the list of iteration scopes. A ``repeat`` keeps one live iteration
frame; a ``for_each`` keeps one frame per live iteration (``concurrency`` of them), each a
branch that suspends and wakes on its own. Their finished iterations, and a for_each's
items, go to the run's journal at its checkpoints (:mod:`tarry.engine.journal`), under the
name their state carries (``repeat`` or ``each``: the step's path): the walk reads a
for_each's items back when it resumes it, and the finished iterations of either once the
last one finishes.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from tarry.backoff import Jitter, grown
from tarry.clock import from_iso, iso
from tarry.engine.commands import Command, ReadJournal
from tarry.engine.frames import new_frame, since
from tarry.engine.journal import DONE, ITEMS, JournalQuery
from tarry.engine.outcome import Blocked, Done, Failed, Outcome, Pending, WaitInfo, step_error
from tarry.engine.values import to_json
from tarry.errors import ExpressionError
from tarry.language.model import Backoff, ForEach, Repeat, Step, Template
from tarry.language.yamlsource import describe_value
from tarry.model import JournalEntry

if TYPE_CHECKING:
    from tarry.engine.interpreter import Interpreter, Names

__all__ = ["backoff_delay", "run_for_each", "run_repeat"]


def backoff_delay(backoff: Backoff, pause: int, draw: float) -> timedelta:
    """The ``pause``-th (1-based) delay of a backoff, with ``draw`` in [0, 1) for jitter:
    ``min(initial · rate^(pause-1), max_delay)``, jittered."""
    base = grown(backoff.initial, backoff.rate, pause - 1, backoff.max_delay)
    return Jitter(backoff.jitter).apply(base, draw)


async def run_repeat(walker: Interpreter, step: Step, cur: dict[str, Any], names: Names,
                     path: str) -> Outcome:
    """Advance a ``repeat``: iterate, test ``until``, pause, until done or exhausted."""
    repeat = step.construct
    assert isinstance(repeat, Repeat)
    env = walker.env
    if not cur:
        cur.update(repeat=path, i=0, done={}, frame=new_frame())
    while True:
        if "next_at" in cur:
            next_at = from_iso(cur["next_at"])
            if env.now < next_at:
                return Blocked((WaitInfo("poll", path, next_at, since=since(cur)),))
            del cur["next_at"]
        index = cur["i"]
        iteration = names.new_child({"loop": {"index": index, "first": index == 0}})
        frame = cur["frame"]
        outcome = await walker.run_scope(frame, repeat.steps, iteration, f"{path}[{index}].")
        if not isinstance(outcome, Done):
            return outcome
        cur["done"][str(index)] = frame["b"]
        if repeat.until is None or _until_holds(walker, repeat.until,
                                                iteration.new_child(frame["b"])):
            return _all_finished(cur, cur["repeat"], index + 1)
        if index + 1 >= repeat.max:
            return step_error("repeat-exhausted",
                              f"'until' was still false after {repeat.max} iterations", path)
        cur.update(i=index + 1, frame=new_frame(),
                   next_at=iso(_next_at(walker, repeat, index + 1, names)), since=iso(env.now))
        env.record("wait.registered", path, kind="poll", until=cur["next_at"])


def _until_holds(walker: Interpreter, until: Template, names: Names) -> bool:
    """The value of ``until``, which must be true or false: a state such as ``'pending'``
    is refused rather than taken for a met condition because it is truthy."""
    value = walker.render(until.source, names)
    if not isinstance(value, bool):
        raise ExpressionError(
            f"'until' must be true or false, got {describe_value(to_json(value))}; compare "
            f"the value, such as {{{{ check.status == 'done' }}}}", expression=until.source)
    return value


def _next_at(walker: Interpreter, repeat: Repeat, pause: int, names: Names) -> datetime:
    """When the next iteration runs: after a backoff's delay, or ``every`` (business time
    on a calendar included)."""
    if repeat.backoff is not None:
        return walker.env.now + backoff_delay(repeat.backoff, pause, walker.env.rng.random())
    assert repeat.every is not None
    return walker.after(repeat.every, names)


async def run_for_each(walker: Interpreter, step: Step, cur: dict[str, Any], names: Names,
                       path: str) -> Outcome:
    """Advance a ``for_each``: keep up to ``concurrency`` iteration branches going."""
    each = step.construct
    assert isinstance(each, ForEach)
    if not cur:
        items = to_json(walker.render(each.items, names))
        if not isinstance(items, list):
            raise ExpressionError(f"for_each needs a list, got {type(items).__name__}")
        cur.update(each=path, items=items, next=0, live={}, done={}, failures=0)
    elif "items" not in cur:  # resumed: its items are in the journal
        return Pending((ReadJournal(JournalQuery((ITEMS,), ITEMS, (cur["each"],)),
                                    functools.partial(_items_read, cur)),))
    while True:
        _start_iterations(cur, each.concurrency)
        outcome = await _advance_live(walker, each, cur, names, path)
        if outcome is not None:
            return outcome
        if cur["live"] or cur["next"] < len(cur["items"]):
            continue  # iterations finished: start the next ones
        return _all_finished(cur, cur["each"], len(cur["items"]))


def _all_finished(cur: dict[str, Any], name: str, count: int) -> Outcome:
    """The loop's binding, its ``count`` iterations' in order; first (when some finished
    before a checkpoint moved them to the journal) the command to read them back."""
    if len(cur["done"]) < count:
        return Pending((ReadJournal(JournalQuery((DONE + name,)),
                                    functools.partial(_finished_read, cur)),))
    return Done([cur["done"][str(index)] for index in range(count)])


def _items_read(cur: dict[str, Any], entries: Sequence[JournalEntry]) -> None:
    [entry] = entries
    cur["items"] = entry.value


def _finished_read(cur: dict[str, Any], entries: Sequence[JournalEntry]) -> None:
    for entry in entries:
        cur["done"].setdefault(entry.key, entry.value)


def _start_iterations(cur: dict[str, Any], concurrency: int) -> None:
    while _has_free_slot(cur, concurrency) and cur["next"] < len(cur["items"]):
        cur["live"][str(cur["next"])] = new_frame()
        cur["next"] += 1


def _has_free_slot(cur: dict[str, Any], concurrency: int) -> bool:
    return len(cur["live"]) < concurrency


async def _advance_live(walker: Interpreter, each: ForEach, cur: dict[str, Any], names: Names,
                        path: str) -> Outcome | None:
    """Advance every live branch; None when some finished (the loop starts the next ones).

    Otherwise the outcome of the whole step: a failure beyond ``tolerate`` or an exit; the
    commands of the branches that need the executor (whose actions then run concurrently);
    or, when every live branch is suspended, their waits together.
    """
    commands: list[Command] = []
    waits: list[WaitInfo] = []
    pending = finished = False
    for key in sorted(cur["live"], key=int):
        outcome = await _advance_branch(walker, each, cur, names, path, key=key)
        if isinstance(outcome, Pending):
            commands.extend(outcome.commands)
            pending = True
            continue
        if isinstance(outcome, Blocked):
            waits.extend(outcome.waits)
            continue
        if isinstance(outcome, Failed):
            cur["failures"] += 1
            if cur["failures"] > each.tolerate:
                return outcome
            cur["done"][key] = {"failed": True, "error": outcome.error}
        elif isinstance(outcome, Done):
            cur["done"][key] = cur["live"][key]["b"]
        else:
            return outcome
        del cur["live"][key]
        finished = True
    more = _has_free_slot(cur, each.concurrency) and cur["next"] < len(cur["items"])
    if not cur["live"] or (finished and more):
        return None
    return Pending(tuple(commands)) if pending else Blocked(tuple(waits))


async def _advance_branch(walker: Interpreter, each: ForEach, cur: dict[str, Any], names: Names,
                          path: str, *, key: str) -> Outcome:
    index = int(key)
    iteration = names.new_child({each.as_: cur["items"][index],
                                 "loop": {"index": index, "first": index == 0}})
    return await walker.run_scope(cur["live"][key], each.steps, iteration, f"{path}[{index}].")

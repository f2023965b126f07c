"""What the walk asks the executor to do: the interpreter decides, the executor does the I/O.

A walk of a YAML run's state (:mod:`tarry.engine.interpreter`) never calls the store or an
action with effects. Where it needs one, it answers :class:`~tarry.engine.outcome.Pending`
with commands, and the executor (:mod:`tarry.engine.executor`) carries them out — runs the
action, records its result in the step's state and checkpoints, or reads the journal — and
walks again, as Temporal's workflow tasks answer with commands for its workers to run:

- :class:`RunAction`: call an action that has effects outside the run (anything but the pure
  built-ins ``set``, ``log`` and ``fail``, which the walk calls itself). Several may be under
  way at once (``for_each`` branches); the walk goes on as each one finishes.
- :class:`ReadJournal`: read entries of the run's journal (a resumed ``for_each``'s items, its
  finished iterations once the last one ends).
- :class:`TakeSlot`: take a slot of the pool a ``limit:`` step names before its action runs
  (the executor notes ``held`` or ``queued`` in the step's state; a queued step blocks).
- :class:`StartChild`: prepare a child run of a ``call`` step (its flow looked up, its inputs
  checked), which the run's next checkpoint creates together with the step's state naming it.

:func:`call_action` is the one way an action is called, by the walk or by the executor: its
result, checked as a stored value, or an :class:`ActionFailed` that the walk then retries or
fails by the step's ``retry``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeAlias

from tarry.actions import ActionContext, ActionRegistry, StepFailure
from tarry.engine.journal import JournalQuery
from tarry.engine.values import to_json
from tarry.errors import ActionError, InvalidValue
from tarry.model import JournalEntry
from tarry.secrets import Redactor
from tarry.values import check_value, stored_text

__all__ = ["DEFAULT_ACTION_TIMEOUT", "ActionFailed", "Command", "ReadJournal", "RunAction",
           "StartChild", "TakeSlot", "call_action"]

DEFAULT_ACTION_TIMEOUT = timedelta(minutes=5)
"""How long a call may run when neither its step nor ``[limits] action_timeout`` says."""


@dataclass(frozen=True)
class RunAction:
    """Call the action ``name`` of the step at ``path`` with ``args``; its result goes into
    the step's state ``cur`` (as ``result``, then a checkpoint), a failure to the walk."""

    path: str
    name: str
    args: dict[str, Any]
    context: ActionContext
    cur: dict[str, Any]
    pool: str | None = None
    """The pool whose slot the step holds while the action runs (given back after it)."""
    timeout: timedelta = DEFAULT_ACTION_TIMEOUT
    """How long the call may run (:mod:`tarry.engine.timeouts`)."""


@dataclass(frozen=True)
class ReadJournal:
    """Read the run's journal entries ``query`` names and hand them to ``into``."""

    query: JournalQuery
    into: Callable[[Sequence[JournalEntry]], None]


@dataclass(frozen=True)
class TakeSlot:
    """Take a slot of ``pool`` for the step at ``path`` (its state ``cur`` says what came of
    it: ``slot`` is ``held``, or ``queued`` with ``ahead``)."""

    path: str
    pool: str
    cur: dict[str, Any]


@dataclass(frozen=True)
class StartChild:
    """Prepare a run of the flow ``flow`` with ``inputs`` and ``target`` as the child of the
    step at ``path``: the executor puts its id in the step's state ``cur`` (as ``child``)
    and the run among those the next checkpoint creates, or hands why it cannot start back
    to the walk (``Env.failures``)."""

    path: str
    flow: str
    inputs: dict[str, Any]
    target: str | None
    cur: dict[str, Any]


Command: TypeAlias = RunAction | ReadJournal | TakeSlot | StartChild


@dataclass(frozen=True)
class ActionFailed:
    """An action call that failed: the error ``kind`` and ``message`` of the step, and whether
    the step's ``retry`` may try again (a result no store can keep is never retried)."""

    kind: str
    message: str
    attempt: int
    retryable: bool = True


async def call_action(actions: ActionRegistry, name: str, args: dict[str, Any],
                      context: ActionContext, *, redact: Redactor,
                      value_bytes: int) -> Any | ActionFailed:
    """The result of the action (JSON data, checked as a stored value), or why it failed.

    An exception of any kind fails the step, ``SystemExit`` and ``KeyboardInterrupt``
    included (a command-line library's ``sys.exit`` on a usage error): it is the action's,
    and the worker carries on. Only a cancellation (the run being dropped) goes through."""
    try:
        result = await actions.call(name, args, context)
    except StepFailure as failure:
        return ActionFailed(failure.type, stored_text(str(failure), redact=redact),
                            context.attempt)
    except ActionError as exc:
        return ActionFailed("action-error", stored_text(str(exc), redact=redact),
                            context.attempt)
    except asyncio.CancelledError:  # the run is being dropped, not the action failing
        raise
    except BaseException as exc:  # SystemExit, KeyboardInterrupt too: the action's, not ours
        return ActionFailed("action-error", stored_text(f"{type(exc).__name__}: {exc}",
                                                        redact=redact), context.attempt)
    what = f"the result of step '{context.step_path}'"
    try:
        stored = to_json(result, what)
        check_value(stored, what, value_bytes)
    except InvalidValue as exc:  # the same value would fail again
        return ActionFailed("value", str(exc), context.attempt, retryable=False)
    return stored

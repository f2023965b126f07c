"""Executing one advance of a Python flow's run, for the executor.

The flow function is called from the top with a fresh :class:`~tarry.sdk.context.Context`
over the run's journal; recorded operations return at once, new ones execute, and the call
ends in one of the outcomes the YAML interpreter gives, so storage, waits, event delivery,
the worker and history are shared:

- the function returned → ``Done(value)``: the run succeeds (exit ``completed``) and the
  stored value is the run's ``result``;
- an operation must wait → ``Blocked(waits)``: every wait of every suspended branch;
- the function called ``ctx.continue_as_new`` → ``Continued(inputs)``: the run succeeds
  (exit ``continued``) and its successor starts with those inputs;
- the function raised → ``Failed({type, message, step})``, where ``type`` is
  ``nondeterminism``, ``condition-exhausted``, ``step-error``, ``child-failed``,
  ``serialization``, ``continue-as-new`` (its inputs refused, or called in a branch), ``event``
  (a wait for an undeclared event type or with the wrong match keys) or, for any other
  exception, ``exception`` (the message then starts with the exception's class).

A nondeterminism found during the call fails the run even if the flow caught the error.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from tarry.engine.outcome import Blocked, Continued, Done, Failed, Outcome
from tarry.errors import (
    ChildFailedError,
    ContinueAsNewError,
    EventError,
    InvalidValue,
    NondeterminismError,
    SerializationError,
    StepError,
    WaitForConditionError,
)
from tarry.language.manifests import Manifest
from tarry.sdk.context import Context, enter, leave
from tarry.sdk.flows import PythonFlow
from tarry.sdk.operations import FlowRun, Teardown
from tarry.sdk.replay import ContinuedAsNew, Journal, Scope, Suspend
from tarry.sdk.serializers import Codec
from tarry.values import stored_text

if TYPE_CHECKING:
    from tarry.engine.interpreter import Env

__all__ = ["advance_flow", "failure_of"]

logger = logging.getLogger("tarry.flows")

_FAILURES: tuple[tuple[type[Exception], str, Callable[[Any], str | None]], ...] = (
    (NondeterminismError, "nondeterminism", lambda exc: exc.operation),
    (WaitForConditionError, "condition-exhausted", lambda exc: exc.condition or None),
    (StepError, "step-error", lambda exc: exc.step),
    (ChildFailedError, "child-failed", lambda exc: exc.step),
    (SerializationError, "serialization", lambda _exc: None),
    (ContinueAsNewError, "continue-as-new", lambda _exc: None),
    (InvalidValue, "value", lambda _exc: None),
    (EventError, "event", lambda _exc: None),
)
"""exception class → the run's error type, and how to find the operation it concerns."""


async def advance_flow(flow: PythonFlow, env: Env, state: dict[str, Any], *, codec: Codec,
                       manifests: Mapping[str, Manifest], dry: bool = False) -> Outcome:
    """Run ``flow`` for one advance of the run whose ``state`` is given (and mutated);
    ``dry``: replay only what the run recorded, executing nothing new (the outcome is
    ``Blocked`` on no wait where the replay stopped)."""
    run = FlowRun(env, Journal(state, dry=dry), codec, manifests)
    scope = Scope(run.journal, "", "the flow")
    token = enter(Context(run, scope))
    try:
        value = await flow.function(Context.current(), **env.inputs)
        scope.finish()
        outcome: Outcome = Done(codec.store(value, f"the value flow '{flow.name}' returned"))
    except Suspend as suspension:
        outcome = Blocked(suspension.waits)
    except ContinuedAsNew as continued:
        outcome = Continued(continued.inputs)
    except Teardown:
        assert run.teardown is not None
        raise run.teardown from None
    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # SystemExit too: the flow's exception, not the worker's
        outcome = failure_of(exc)
        if outcome.error["type"] == "exception" and not dry:
            logger.warning("run %s: flow '%s' raised", env.run_id, flow.name, exc_info=exc,
                           extra={"run_id": env.run_id})
    finally:
        leave(token)
    if run.journal.broken is not None:
        outcome = failure_of(run.journal.broken)
    return outcome


def failure_of(exc: BaseException) -> Failed:
    """The run's error for an exception that escaped the flow function."""
    for kind, error_type, operation in _FAILURES:
        if isinstance(exc, kind):
            return Failed({"type": error_type, "message": stored_text(str(exc)),
                           "step": operation(exc)})
    return Failed({"type": "exception", "message": stored_text(f"{type(exc).__name__}: {exc}"),
                   "step": None})

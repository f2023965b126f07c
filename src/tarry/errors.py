"""Every exception tarry raises on purpose.

The hierarchy (the API bases, marked ``[API]``, say how a server answers: 404, 409, 400,
403 and 503; a concrete error may also belong to a family such as ``RunError``)::

    TarryError                      base of everything below; catch this to catch tarry
    ├── ConfigError                 tarry.toml or a TARRY_* variable is wrong
    ├── LoadError                   a flow, manifest or scenario file was refused at load
    │                               (carries every Problem found, each with file:line:col)
    ├── ExpressionError             a {{ … }} expression failed to parse or to evaluate
    ├── NotFound [API]              nothing has that id or name (``kind``, ``key``)
    │   ├── RunNotFound             no run has that id                  (also a RunError)
    │   ├── FlowNotFound            no YAML file or registered Python flow has that name
    │   ├── EventNotFound           no event has that id                (also an EventError)
    │   ├── UnknownEventType        no manifest declares that type      (also an EventError)
    │   ├── TaskNotFound            no task has that id                 (also a TaskError)
    │   └── BatchNotFound           no batch (a bulk action) has that id
    ├── Conflict [API]              the thing exists, but its state forbids the request
    │   │                           (``kind``, ``key``, ``state``)
    │   ├── RunStateError           e.g. cancelling a finished run      (also a RunError)
    │   ├── EventStateError         e.g. redelivering a delivered event, or an id that
    │   │                           several types share                 (also an EventError)
    │   └── TaskStateError          completing a task already completed or past its
    │                               deadline                            (also a TaskError)
    ├── InvalidRequest [API]        the request itself is wrong (``problems``)
    │   ├── InvalidRunRequest       bad inputs, a bad --hold-after      (also a RunError)
    │   │   └── AmbiguousRunId      a run id prefix that several runs' ids start with
    │   ├── InvalidTaskCompletion   an outcome or data the task does not accept (an API
    │   │                           answers 422)                        (also a TaskError)
    │   └── AmbiguousTaskId         a task id prefix that several tasks' ids start with
    │                                                                   (also a TaskError)
    ├── Forbidden [API]             the principal may not do this (``principal``)
    │   └── TaskForbidden           completing a task not assigned to one (also a TaskError)
    ├── RunError                    a request about a run cannot be honoured (family)
    ├── EventError                  an event cannot be accepted or waited for (family; also
    │                               a Python flow's wait whose match is not the manifest's)
    ├── TaskError                   a task for a person cannot be completed (family)
    ├── ActionError                 an action is unknown or misbehaved (wrong return type)
    ├── StepError                   a step of a Python flow raised (recorded: a replay raises
    │                               the same StepError, never calls the step again)
    ├── WaitForConditionError       a Python flow's wait_for_condition gave up (attempts,
    │                               last_state)
    ├── ChildFailedError            a Python flow's child run (ctx.call) did not succeed
    │                               (step, run, status, error)
    ├── NondeterminismError         a Python flow's code no longer makes the calls its run
    │                               recorded (which operation, recorded vs requested)
    ├── ContinueAsNewError          a Python flow's continue_as_new was refused (inputs the
    │                               flow does not take, a call inside a branch)
    ├── SerializationError          a value a Python flow records cannot be stored as JSON
    ├── InvalidValue                a value is not portable JSON (NaN, NUL, a lone surrogate,
    │   │                           too deep) and no store gets it (``what``, ``reason``)
    │   └── ValueTooLarge           its JSON is over a ``[limits]`` size (413 in the API)
    ├── StateVersionError           a run's state is newer than this code (found, supported)
    └── StoreError                  the store failed; the driver's exception is ``__cause__``
        ├── StoreUnavailable [API]  the database cannot be reached (``retry_after`` seconds)
        ├── StoreMissing            no store yet where the project says (reading never
        │                           creates one)
        └── MigrationError          the schema is missing, newer than this code, or broken

Every error has ``details``: its structured fields as a JSON object (what an API puts in
``{error: {type, message, details}}``).

A message is always a sentence a user can act on; structured fields carry the details so a
program need not parse the message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "ActionError",
    "AmbiguousRunId",
    "AmbiguousTaskId",
    "BatchNotFound",
    "ChildFailedError",
    "ConfigError",
    "Conflict",
    "ContinueAsNewError",
    "EventError",
    "EventNotFound",
    "EventStateError",
    "ExpressionError",
    "FlowNotFound",
    "Forbidden",
    "InvalidRequest",
    "InvalidRunRequest",
    "InvalidTaskCompletion",
    "InvalidValue",
    "LoadError",
    "MigrationError",
    "NondeterminismError",
    "NotFound",
    "Problem",
    "RunError",
    "RunNotFound",
    "RunStateError",
    "SerializationError",
    "StateVersionError",
    "StepError",
    "StoreError",
    "StoreMissing",
    "StoreUnavailable",
    "TarryError",
    "TaskError",
    "TaskForbidden",
    "TaskNotFound",
    "TaskStateError",
    "UnknownEventType",
    "ValueTooLarge",
    "WaitForConditionError",
]


class TarryError(Exception):
    """Base class of every error tarry raises on purpose."""

    @property
    def details(self) -> dict[str, Any]:
        """The structured fields of this error, as a JSON object (empty unless a subclass
        has some)."""
        return {}


class NotFound(TarryError):
    """Nothing of ``kind`` (``run``, ``flow``, ``event``, ``event type``) has ``key``."""

    def __init__(self, message: str, *, kind: str, key: str) -> None:
        self.kind = kind
        self.key = key
        super().__init__(message)

    @property
    def details(self) -> dict[str, Any]:
        """``{kind, key}``."""
        return {"kind": self.kind, "key": self.key}


class Conflict(TarryError):
    """The ``kind`` with ``key`` exists, but its ``state`` forbids the request."""

    def __init__(self, message: str, *, kind: str, key: str, state: str) -> None:
        self.kind = kind
        self.key = key
        self.state = state
        super().__init__(message)

    @property
    def details(self) -> dict[str, Any]:
        """``{kind, key, state}``."""
        return {"kind": self.kind, "key": self.key, "state": self.state}


class InvalidRequest(TarryError):
    """The request itself is wrong; ``problems`` lists every reason (the message joins
    them with ``; ``)."""

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))

    @property
    def details(self) -> dict[str, Any]:
        """``{problems}``."""
        return {"problems": list(self.problems)}


class Forbidden(TarryError):
    """The ``principal`` is known but may not make this request."""

    def __init__(self, message: str, *, principal: str) -> None:
        self.principal = principal
        super().__init__(message)

    @property
    def details(self) -> dict[str, Any]:
        """``{principal}``."""
        return {"principal": self.principal}


class ConfigError(TarryError):
    """The project configuration (``tarry.toml`` or a ``TARRY_*`` variable) is invalid.

    Several mistakes found at once are its ``args``, one message each (a line each in
    ``str``), so that one run reports all of them."""

    def __str__(self) -> str:
        return "\n".join(str(message) for message in self.args)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a loaded file, at a 1-based line and column."""

    file: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}"


class LoadError(TarryError):
    """A flow, manifest or scenario file was refused; ``problems`` lists every reason."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class ExpressionError(TarryError):
    """An expression could not be parsed or evaluated.

    ``expression`` is the source text; ``step`` the step path that used it, when known.
    """

    def __init__(self, message: str, *, expression: str = "", step: str | None = None) -> None:
        self.expression = expression
        self.step = step
        self.reason = message
        where = f" in step '{step}'" if step else ""
        super().__init__(f"{message}{where}" + (f": {expression}" if expression else ""))

    def at_step(self, step: str) -> ExpressionError:
        """The same error, attributed to ``step``."""
        return ExpressionError(self.reason, expression=self.expression, step=step)


class RunError(TarryError):
    """A request about a run cannot be honoured."""


class RunNotFound(NotFound, RunError):
    """No run has the given id."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(f"no run with id {run_id!r}", kind="run", key=run_id)


class BatchNotFound(NotFound):
    """No batch (a bulk action over runs) has the given id."""

    def __init__(self, batch_id: str) -> None:
        super().__init__(f"no batch with id {batch_id!r}", kind="batch", key=batch_id)


class RunStateError(Conflict, RunError):
    """The run's status forbids the request (for example cancelling a finished run)."""

    def __init__(self, run_id: str, status: str, message: str) -> None:
        super().__init__(message, kind="run", key=run_id, state=status)


class InvalidRunRequest(InvalidRequest, RunError):
    """A start's inputs or options are wrong (every problem in ``problems``)."""


class AmbiguousRunId(InvalidRunRequest):
    """A run id prefix that several runs' ids start with (``prefix``, ``examples``)."""

    def __init__(self, prefix: str, examples: list[str]) -> None:
        self.prefix = prefix
        self.examples = examples
        super().__init__(_ambiguous("run", prefix, examples))


def _ambiguous(kind: str, prefix: str, examples: list[str]) -> str:
    """What a command says of an id prefix that several ids of ``kind`` start with."""
    return (f"{kind} id prefix {prefix!r} is ambiguous: {kind}s {', '.join(examples)} and "
            "perhaps more start with it; give more of the id")


class FlowNotFound(NotFound):
    """No flow file, registered Python flow or stored source answers to ``key``."""

    def __init__(self, message: str, *, key: str) -> None:
        super().__init__(message, kind="flow", key=key)


class EventError(TarryError):
    """An event cannot be accepted or waited for: its type is not declared, no event has that
    id, or a wait's match does not give exactly the manifest's correlation keys."""


class EventNotFound(NotFound, EventError):
    """No event has the id ``key``."""

    def __init__(self, event_id: str) -> None:
        super().__init__(f"no event with id '{event_id}'", kind="event", key=event_id)


class UnknownEventType(NotFound, EventError):
    """No manifest declares the event type ``key``."""

    def __init__(self, event_type: str, message: str) -> None:
        super().__init__(message, kind="event type", key=event_type)


class EventStateError(Conflict, EventError):
    """The event's state forbids the request (``state``), or its id is ambiguous."""

    def __init__(self, event_id: str, state: str, message: str) -> None:
        super().__init__(message, kind="event", key=event_id, state=state)


class TaskError(TarryError):
    """A task for a person cannot be completed: no task has the id, it is no longer open,
    the principal is not among its assignees, or the outcome or data do not fit it."""


class TaskNotFound(NotFound, TaskError):
    """No task has the id ``key``."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"no task with id '{task_id}'", kind="task", key=task_id)


class TaskStateError(Conflict, TaskError):
    """The task is no longer open (``state``: ``completed``, ``timeout``, ``cancelled``), or its
    deadline passed (``timeout``): nothing was changed."""

    def __init__(self, task_id: str, state: str, message: str) -> None:
        super().__init__(message, kind="task", key=task_id, state=state)


class TaskForbidden(Forbidden, TaskError):
    """The principal is not among the task's assignees (``assign``)."""

    def __init__(self, task_id: str, principal: str, assign: tuple[str, ...]) -> None:
        self.task_id = task_id
        self.assign = assign
        super().__init__(f"task '{task_id}' is assigned to {', '.join(assign)}; "
                         f"'{principal}' may not complete it", principal=principal)

    @property
    def details(self) -> dict[str, Any]:
        """``{principal, task, assign}``."""
        return {"principal": self.principal, "task": self.task_id, "assign": list(self.assign)}


class InvalidTaskCompletion(InvalidRequest, TaskError):
    """The outcome is not one of the task's, or the data does not fit its form
    (every reason in ``problems``)."""


class AmbiguousTaskId(InvalidRequest, TaskError):
    """A task id prefix that several tasks' ids start with (``prefix``, ``examples``)."""

    def __init__(self, prefix: str, examples: list[str]) -> None:
        self.prefix = prefix
        self.examples = examples
        super().__init__(_ambiguous("task", prefix, examples))


class ActionError(TarryError):
    """An action is not registered, or returned something other than a dict or None."""


class StepError(TarryError):
    """A step of a Python flow raised an exception.

    The failure is recorded like a result: ``step`` is the operation's path, ``type`` the
    exception's class name (``timeout`` for a step that outlived ``[limits]
    action_timeout``) and ``message`` its text. The first execution raises it with the
    original exception as ``__cause__``; a replay raises the same StepError without calling
    the step again, so a flow that catches it takes the same path every time.
    """

    def __init__(self, step: str, type: str, message: str) -> None:
        self.step = step
        self.type = type
        self.message = message
        super().__init__(f"step '{step}' raised {type}: {message}")


class ChildFailedError(TarryError):
    """A child run started by ``ctx.call`` ended without succeeding (failed, cancelled or
    refused), or could not start (``not-started``: no such flow, inputs that do not fit;
    ``run`` is then None). ``step`` is the call's path, ``run`` the child's id, ``status``
    how it ended and ``error`` its error (``{type, message, step}``, or None). Uncaught, it
    fails the parent run as ``child-failed``; a replay raises the same error."""

    def __init__(self, step: str, run: str | None, status: str,
                 error: dict[str, Any] | None) -> None:
        self.step = step
        self.run = run
        self.status = status
        self.error = error
        why = f": {error.get('type')}: {error.get('message')}" if error else ""
        which = f"child run {run} {status}" if run else f"the child of '{step}' {status}"
        super().__init__(f"{which}{why}")

    @property
    def details(self) -> dict[str, Any]:
        """``{step, run, status, error}``."""
        return {"step": self.step, "run": self.run, "status": self.status,
                "error": self.error}


class WaitForConditionError(TarryError):
    """A ``wait_for_condition`` gave up: its strategy ran out of attempts before the
    condition was met. ``attempts`` is how many checks ran, ``last_state`` what the last one
    returned, ``condition`` the operation's path (empty when raised by a strategy itself)."""

    def __init__(self, attempts: int, last_state: Any, *, condition: str = "") -> None:
        self.attempts = attempts
        self.last_state = last_state
        self.condition = condition
        named = f"condition '{condition}'" if condition else "the condition"
        shown = repr(last_state)
        if len(shown) > 200:
            shown = shown[:197] + "..."
        super().__init__(f"{named} was not met after {attempts} attempt"
                         f"{'' if attempts == 1 else 's'}; last state: {shown}")


class NondeterminismError(TarryError):
    """A Python flow, re-executed to resume its run, asked for a different operation than the
    one its run recorded at that point: its code changed under a running run.

    ``operation`` is the path of the operation that changed, ``recorded`` and ``requested``
    describe what the run recorded there and what the code asks for now (``None`` when the
    code asks for nothing more, or the run recorded nothing).
    """

    def __init__(self, message: str, *, operation: str, recorded: str | None,
                 requested: str | None) -> None:
        self.operation = operation
        self.recorded = recorded
        self.requested = requested
        super().__init__(message)


class SerializationError(TarryError):
    """A value a Python flow records (a step's result, a condition's state, the flow's return
    value) cannot be stored as JSON by the app's serializer. ``what`` names the value."""

    def __init__(self, what: str, reason: str) -> None:
        self.what = what
        self.reason = reason
        super().__init__(f"{what} cannot be stored: {reason}")


class ContinueAsNewError(TarryError):
    """A Python flow's ``ctx.continue_as_new`` cannot be honoured: its inputs are not what the
    flow takes (every reason in ``problems``), or it was called inside a ``parallel`` /
    ``map`` branch. The run fails with it (error type ``continue-as-new``) unless the flow
    catches it."""

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("ctx.continue_as_new: " + "; ".join(self.problems))

    @property
    def details(self) -> dict[str, Any]:
        """``{problems}``."""
        return {"problems": list(self.problems)}


class InvalidValue(TarryError):
    """A value that would cross into the store is not portable JSON: ``what``
    names it (``event data``, ``the result of step 'fetch'``), ``reason`` says why and where
    inside it. See :mod:`tarry.values`."""

    def __init__(self, what: str, reason: str) -> None:
        self.what = what
        self.reason = reason
        super().__init__(f"{what}: {reason}")

    @property
    def details(self) -> dict[str, Any]:
        """``{what, reason}``."""
        return {"what": self.what, "reason": self.reason}


class ValueTooLarge(InvalidValue):
    """A value's JSON (``size`` bytes, or more with ``at_least``) is over ``limit``, the
    ``[limits]`` key ``setting``."""

    def __init__(self, what: str, *, size: int, limit: int, setting: str,
                 at_least: bool = False) -> None:
        self.size = size
        self.limit = limit
        self.setting = setting
        more = "more than " if at_least else ""
        super().__init__(what, f"{more}{size:,} bytes as JSON is over the limit of {limit:,} "
                               f"bytes ([limits] {setting})")

    @property
    def details(self) -> dict[str, Any]:
        """``{what, reason, size, limit, setting}``."""
        return {**super().details, "size": self.size, "limit": self.limit,
                "setting": self.setting}
class StateVersionError(TarryError):
    """A run's persisted state is newer than this tarry: it was written by a later release.
    The run is left as it is, for a worker of that release to resume."""

    def __init__(self, found: object, supported: int) -> None:
        self.found = found
        self.supported = supported
        super().__init__(f"the run's state is version {found}, newer than this tarry "
                         f"understands (version {supported}): upgrade tarry to resume it")

    @property
    def details(self) -> dict[str, Any]:
        """``{found, supported}``."""
        return {"found": self.found, "supported": self.supported}


class StoreError(TarryError):
    """The store failed. The driver's own exception is kept as ``__cause__``."""


class StoreUnavailable(StoreError):
    """The database cannot be reached right now; the operation may be retried after
    ``retry_after`` seconds."""

    def __init__(self, message: str, *, retry_after: float = 1.0) -> None:
        self.retry_after = retry_after
        super().__init__(message)

    @property
    def details(self) -> dict[str, Any]:
        """``{retry_after}``."""
        return {"retry_after": self.retry_after}


class StoreMissing(StoreError):
    """No store exists yet where the project's configuration says; commands that only read
    never create one."""


class MigrationError(StoreError):
    """The database schema is missing, newer than this code understands, or inconsistent."""

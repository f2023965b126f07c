"""Every exception tarry raises on purpose.

The hierarchy::

    TarryError                      base of everything below; catch this to catch tarry
    ├── ConfigError                 tarry.toml or a TARRY_* variable is wrong
    ├── LoadError                   a flow, manifest or scenario file was refused at load
    │                               (carries every Problem found, each with file:line:col)
    ├── ExpressionError             a {{ … }} expression failed to parse or to evaluate
    ├── RunError                    a request about a run cannot be honoured
    │   ├── RunNotFound             no run has that id
    │   └── RunStateError           the run is in a status that forbids the request
    ├── FlowNotFound                no YAML file or registered Python flow has that name
    ├── EventError                  an event cannot be accepted or waited for (unknown type,
    │                               unknown id, a match that is not the manifest's keys)
    ├── ActionError                 an action is unknown or misbehaved (wrong return type)
    ├── StepError                   a step of a Python flow raised (recorded: a replay raises
    │                               the same StepError, never calls the step again)
    ├── WaitForConditionError       a Python flow's wait_for_condition gave up (attempts,
    │                               last_state)
    ├── NondeterminismError         a Python flow's code no longer makes the calls its run
    │                               recorded (which operation, recorded vs requested)
    ├── SerializationError          a value a Python flow records cannot be stored as JSON
    └── StoreError                  the store failed; the driver's exception is ``__cause__``
        ├── StoreUnavailable        the database cannot be reached (retry later)
        └── MigrationError          the schema is missing, newer than this code, or broken

A message is always a sentence a user can act on; structured fields carry the details so a
program need not parse the message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "ActionError",
    "ConfigError",
    "EventError",
    "ExpressionError",
    "FlowNotFound",
    "LoadError",
    "MigrationError",
    "NondeterminismError",
    "Problem",
    "RunError",
    "RunNotFound",
    "RunStateError",
    "SerializationError",
    "StepError",
    "StoreError",
    "StoreUnavailable",
    "TarryError",
    "WaitForConditionError",
]


class TarryError(Exception):
    """Base class of every error tarry raises on purpose."""


class ConfigError(TarryError):
    """The project configuration (``tarry.toml`` or a ``TARRY_*`` variable) is invalid."""


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


class RunNotFound(RunError):
    """No run has the given id."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(f"no run with id {run_id!r}")


class RunStateError(RunError):
    """The run's status forbids the request (for example cancelling a finished run)."""


class FlowNotFound(TarryError):
    """No flow file or registered Python flow answers to the name."""


class EventError(TarryError):
    """An event cannot be accepted or waited for: its type is not declared, no event has that
    id, or a wait's match does not give exactly the manifest's correlation keys."""


class ActionError(TarryError):
    """An action is not registered, or returned something other than a dict or None."""


class StepError(TarryError):
    """A step of a Python flow raised an exception.

    The failure is recorded like a result: ``step`` is the operation's path, ``type`` the
    exception's class name and ``message`` its text. The first execution raises it with the
    original exception as ``__cause__``; a replay raises the same StepError without calling
    the step again, so a flow that catches it takes the same path every time.
    """

    def __init__(self, step: str, type: str, message: str) -> None:
        self.step = step
        self.type = type
        self.message = message
        super().__init__(f"step '{step}' raised {type}: {message}")


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


class StoreError(TarryError):
    """The store failed. The driver's own exception is kept as ``__cause__``."""


class StoreUnavailable(StoreError):
    """The database cannot be reached right now; the operation may be retried."""


class MigrationError(StoreError):
    """The database schema is missing, newer than this code understands, or inconsistent."""

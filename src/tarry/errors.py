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
    ├── EventError                  an event cannot be accepted (unknown type, unknown id)
    ├── ActionError                 an action is unknown or misbehaved (wrong return type)
    └── StoreError                  the store failed; the driver's exception is ``__cause__``
        ├── StoreUnavailable        the database cannot be reached (retry later)
        └── MigrationError          the schema is missing, newer than this code, or broken

A message is always a sentence a user can act on; structured fields carry the details so a
program need not parse the message.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ActionError",
    "ConfigError",
    "EventError",
    "ExpressionError",
    "FlowNotFound",
    "LoadError",
    "MigrationError",
    "Problem",
    "RunError",
    "RunNotFound",
    "RunStateError",
    "StoreError",
    "StoreUnavailable",
    "TarryError",
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
    """An event cannot be accepted: its type is not declared, or no event has that id."""


class ActionError(TarryError):
    """An action is not registered, or returned something other than a dict or None."""


class StoreError(TarryError):
    """The store failed. The driver's own exception is kept as ``__cause__``."""


class StoreUnavailable(StoreError):
    """The database cannot be reached right now; the operation may be retried."""


class MigrationError(StoreError):
    """The database schema is missing, newer than this code understands, or inconsistent."""

"""The typed form of a flow file, as the loader produces it and the interpreter reads it.

Every node is a frozen dataclass carrying the :class:`Position` it was written at, so errors
at run time can point back into the file. Values that may hold ``{{ … }}`` expressions are
kept as written (:data:`Value`) and rendered at run time; fields that accept either a literal
or an expression use :class:`Template` for the expression case and the parsed literal
(``timedelta``, ``datetime``, ``int``) otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, TypeAlias

__all__ = [
    "Action",
    "Ask",
    "Backoff",
    "BusinessTime",
    "Call",
    "CatchUp",
    "Concurrency",
    "Construct",
    "Debounce",
    "EventAlternative",
    "EventTrigger",
    "Exit",
    "Fail",
    "Flow",
    "ForEach",
    "Group",
    "HoldAfter",
    "HoldCheck",
    "HoldCondition",
    "InputSpec",
    "InputType",
    "Position",
    "Remind",
    "Repeat",
    "Retry",
    "ScheduleTrigger",
    "Scope",
    "Step",
    "Template",
    "Throttle",
    "Trigger",
    "Value",
    "Wait",
    "WaitFor",
    "actions_called",
    "pools_named",
]

Value: TypeAlias = Any
"""A JSON-like value as written in YAML; strings in it may contain ``{{ … }}``."""

InputType = Literal["string", "integer", "number", "boolean", "object", "array", "instant",
                    "duration", "any"]


@dataclass(frozen=True)
class Position:
    """Where a node was written: file and 1-based line and column."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Template:
    """A string holding one or more ``{{ … }}`` expressions, rendered at run time."""

    source: str


@dataclass(frozen=True)
class BusinessTime:
    """``{for: 16h, calendar: support}``: a duration counted on a business calendar (whole
    days as business days, the rest as open time; :mod:`tarry.language.calendars`)."""

    amount: timedelta | Template
    calendar: str


@dataclass(frozen=True)
class Backoff:
    """A growing delay: ``initial · rate^n`` capped at ``max_delay``, plus jitter."""

    initial: timedelta
    max_delay: timedelta
    rate: float = 2.0
    jitter: Literal["full", "half", "none"] = "none"


@dataclass(frozen=True)
class Retry:
    """``retry: {max, every, backoff}``: re-run a failed action up to ``max`` more times.

    The n-th retry (1-based) waits ``every · backoff^(n-1)``.
    """

    max: int
    every: timedelta
    backoff: float = 1.0


@dataclass(frozen=True)
class Action:
    """Call a named action (built-in or user) with rendered arguments; ``timeout`` bounds
    one call (None: the project's ``[limits] action_timeout``)."""

    name: str
    args: Value
    timeout: timedelta | None = None


def pools_named(node: object) -> Iterator[str]:
    """The pool of every step with ``limit:`` of a flow (or any node of one), in the order
    written."""
    if isinstance(node, Step) and node.limit is not None:
        yield node.limit
    if is_dataclass(node) and not isinstance(node, type):
        for each in fields(node):
            yield from pools_named(getattr(node, each.name))
    elif isinstance(node, tuple):
        for item in node:
            yield from pools_named(item)


def actions_called(node: object) -> Iterator[str]:
    """The name of every action a flow (or any node of one) calls, in the order written."""
    if isinstance(node, Action):
        yield node.name
    elif is_dataclass(node) and not isinstance(node, type):
        for each in fields(node):
            yield from actions_called(getattr(node, each.name))
    elif isinstance(node, tuple):
        for item in node:
            yield from actions_called(item)


@dataclass(frozen=True)
class Wait:
    """``wait: {for | until}``: exactly one of the two is set."""

    for_: timedelta | Template | BusinessTime | None = None
    until: datetime | Template | None = None


@dataclass(frozen=True)
class EventAlternative:
    """One event a ``wait_for`` accepts: its type and the value of each correlation key."""

    event: str
    match: dict[str, Value]
    pos: Position


@dataclass(frozen=True)
class Remind:
    """``remind: {every, max?, steps}``: reminder steps that run while a wait goes on."""

    every: timedelta | BusinessTime
    max: int | None
    steps: Scope


@dataclass(frozen=True)
class WaitFor:
    """Wait for a correlated event or a timeout.

    ``alternatives`` has one entry for the plain form and one per ``any:`` entry; ``is_any``
    says the ``any:`` form was written (the binding then carries ``type``).
    """

    alternatives: tuple[EventAlternative, ...]
    timeout: timedelta | datetime | Template | BusinessTime
    is_any: bool = False
    accept: Template | None = None
    remind: Remind | None = None


@dataclass(frozen=True)
class Ask:
    """``ask:`` a task for a person: a wait whose event comes from a form.

    ``title`` and ``details`` are text that may hold expressions; ``assign`` the principals
    who may complete it (a list of names that may hold expressions, or one expression giving
    a list; None: anyone); ``form`` a JSON Schema of what the person fills in; ``outcomes``
    the decisions, one button each.
    """

    title: Value
    outcomes: tuple[str, ...]
    timeout: timedelta | datetime | Template | BusinessTime
    details: Value = None
    assign: Value = None
    form: dict[str, Any] | None = None
    remind: Remind | None = None


@dataclass(frozen=True)
class Call:
    """``call: {flow, inputs?, target?}``: start a run of another flow (a child) and wait
    for it to end, until ``timeout`` if one is given.

    ``inputs`` maps the child's inputs to values that may hold expressions; ``target`` is
    text that may hold them (None: the child has no target).
    """

    flow: str
    pos: Position
    inputs: dict[str, Value] = field(default_factory=dict)
    target: Value = None
    timeout: timedelta | datetime | Template | None = None


@dataclass(frozen=True)
class Repeat:
    """Bounded polling: run ``steps`` up to ``max`` times until ``until`` holds.

    Exactly one of ``every`` and ``backoff`` sets the pause before each later iteration.
    """

    max: int
    steps: Scope
    every: timedelta | Template | BusinessTime | None = None
    backoff: Backoff | None = None
    until: Template | None = None


@dataclass(frozen=True)
class ForEach:
    """Iterate ``steps`` over a list, sequentially or as ``concurrency`` parallel branches."""

    items: Value
    steps: Scope
    as_: str = "item"
    concurrency: int = 1
    tolerate: int = 0


@dataclass(frozen=True)
class Group:
    """A nested scope (a step whose body is ``steps:``)."""

    steps: Scope


@dataclass(frozen=True)
class Exit:
    """End the run successfully with a named exit."""

    name: str


@dataclass(frozen=True)
class Fail:
    """Fail the step with a message (``error.type = failed``)."""

    message: Value


Construct: TypeAlias = (Action | Wait | WaitFor | Ask | Call | Repeat | ForEach | Group | Exit
                        | Fail)


@dataclass(frozen=True)
class Step:
    """One entry of a ``steps`` list: an id, a construct and the modifiers."""

    id: str
    construct: Construct
    pos: Position
    if_: Template | bool | None = None
    optional: bool = False
    retry: Retry | None = None
    limit: str | None = None
    """The slot pool (``[limits.pools]``) the step's action takes a slot of while it runs."""
    window: str | None = None
    """``window: NAME``: the step starts only while that calendar is open."""


@dataclass(frozen=True)
class Scope:
    """A list of steps plus the optional ``recover`` steps that run when one fails."""

    steps: tuple[Step, ...]
    recover: tuple[Step, ...] = ()


@dataclass(frozen=True)
class InputSpec:
    """One declared input of a flow."""

    name: str
    type: InputType = "any"
    required: bool = False
    default: Value = None
    has_default: bool = False


@dataclass(frozen=True)
class HoldAfter:
    """Hold condition: do not start before ``instant``."""

    instant: datetime
    pos: Position


@dataclass(frozen=True)
class HoldCheck:
    """Hold condition: the operator-declared check ``name`` must answer go."""

    name: str
    pos: Position


HoldCondition: TypeAlias = HoldAfter | HoldCheck


CatchUp = Literal["none", "latest", "all"]
"""Which occurrences a schedule creates after downtime: none, the latest missed, or all."""


@dataclass(frozen=True)
class Debounce:
    """An event trigger's ``debounce``: the events of one ``key`` (``event`` in scope; None:
    one key for the trigger) that arrive within ``period`` of each other start one run, with
    the last one, ``period`` after it — at most ``max_delay`` after the first, when given."""

    key: Template | None
    period: timedelta
    max_delay: timedelta | None = None


@dataclass(frozen=True)
class EventTrigger:
    """``on: - event: <type>``: every event of that type for which ``condition`` holds starts
    a run, with ``target`` and ``inputs`` computed from the event (``event`` in scope);
    with ``debounce``, a burst of them starts one run."""

    event: str
    pos: Position
    condition: Template | bool = True
    target: Template | str | None = None
    inputs: Value = field(default_factory=dict)
    debounce: Debounce | None = None


@dataclass(frozen=True)
class ScheduleTrigger:
    """``on: - schedule: <cron>``: a run at each occurrence of ``cron`` in ``timezone``;
    ``catch_up`` says which missed occurrences are created after downtime."""

    cron: str
    timezone: str
    pos: Position
    catch_up: CatchUp = "latest"
    target: Template | str | None = None
    inputs: Value = field(default_factory=dict)


Trigger: TypeAlias = EventTrigger | ScheduleTrigger


@dataclass(frozen=True)
class Concurrency:
    """``concurrency: {key, limit}``: at most ``limit`` runs with the same rendered ``key``
    past their start and not ended (no ``key``: one key for the whole flow)."""

    key: Template | str | None
    limit: int
    pos: Position


@dataclass(frozen=True)
class Throttle:
    """A flow's ``throttle``: a run's first step waits until fewer than ``limit`` runs of
    its ``key`` (the inputs and ``run`` in scope; None: one key for the flow) started within
    the last ``per``."""

    key: Template | None
    limit: int
    per: timedelta


@dataclass(frozen=True)
class Flow:
    """A loaded, validated flow.

    ``source`` is the exact file text: runs store it (by ``digest``) so that a run resumes
    against the definition it started with even after the file changes.
    """

    name: str
    body: Scope
    source: str
    digest: str
    path: str
    description: str = ""
    timezone: str | None = None
    inputs: dict[str, InputSpec] = field(default_factory=dict)
    hold: tuple[HoldCondition, ...] = ()
    triggers: tuple[Trigger, ...] = ()
    concurrency: Concurrency | None = None
    throttle: Throttle | None = None
    window: str | None = None
    """``window: NAME``: each run's first step waits until that calendar is open."""

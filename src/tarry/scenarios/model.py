"""The typed form of a scenario file, as the loader produces it and the runner reads it.

A scenario names a flow and the inputs to start it with (or starts nothing, leaving its runs
to the project's triggers), replaces some actions and hold checks by stubs, scripts events
and people's answers to tasks at virtual instants, and lists what the run — and the runs
triggers started — must come to. Every part keeps the
:class:`~tarry.language.model.Position` it was written at, so a problem found later (a flow
that does not exist, an expectation that failed) points back into the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeAlias

from tarry.clock import VIRTUAL_START, iso
from tarry.holds.checks import Answer as CheckAnswer
from tarry.language.model import Position

__all__ = [
    "DEFAULT_HORIZON",
    "DEFAULT_START",
    "Answer",
    "CheckPhase",
    "CheckScript",
    "CheckStub",
    "Downtime",
    "Expectation",
    "ExpectedRun",
    "FlowStub",
    "RealCheck",
    "RunIdentity",
    "Scenario",
    "ScriptedEvent",
    "ScriptedTask",
    "Stub",
    "StubFailure",
    "describe_identity",
]

DEFAULT_HORIZON = timedelta(days=400)
"""How much virtual time a scenario may take before it stops (its run may still be waiting)."""

DEFAULT_START = VIRTUAL_START
"""The virtual instant a scenario starts at unless it says ``start``."""

@dataclass(frozen=True)
class StubFailure:
    """A stub answer that fails the step, as an action raising an error would."""

    message: str
    type: str = "action-error"


Answer: TypeAlias = Mapping[str, Any] | StubFailure | None
"""What one call of a stubbed action gives: a result (the binding), a failure, or nothing."""


@dataclass(frozen=True)
class Stub:
    """An action replaced by scripted answers: one per call, the last one repeating."""

    action: str
    answers: tuple[Answer, ...]


@dataclass(frozen=True)
class FlowStub:
    """A called flow replaced by a scripted outcome: each child run of it (a ``call`` of the
    scenario's runs) ends at once as ``status`` (``succeeded``, with ``exit`` or with a
    Python flow's ``result``; or ``failed``, with ``message``)."""

    flow: str
    pos: Position
    status: str = "succeeded"
    exit: str | None = None
    result: Any = None
    message: str | None = None


@dataclass(frozen=True)
class CheckPhase:
    """One answer of a stubbed check: given to every check before ``until`` (to every check
    from then on when ``until`` is None, which only the last phase is)."""

    answer: CheckAnswer
    """A check's answer as history records it: ``go``, ``not_yet``, ``never``, ``unknown``."""
    until: datetime | None = None


@dataclass(frozen=True)
class CheckStub:
    """A hold check whose answers the scenario scripts by virtual instant; no process runs."""

    name: str
    phases: tuple[CheckPhase, ...]
    pos: Position

    def answer_at(self, now: datetime) -> CheckAnswer:
        """The answer a check asked at ``now`` gets: the first phase not over by then."""
        return next(phase.answer for phase in self.phases
                    if phase.until is None or now < phase.until)


@dataclass(frozen=True)
class RealCheck:
    """A hold check run as the real executable at ``path`` (as written: relative to the
    project root, or absolute), as a worker runs it."""

    name: str
    path: str
    pos: Position


CheckScript: TypeAlias = CheckStub | RealCheck
"""What a scenario says of one check: stubbed answers, or the real executable."""


@dataclass(frozen=True)
class ScriptedEvent:
    """An event sent at a virtual instant.

    The instant is ``after`` past the scenario's start or, with ``after_step``, past the
    first completion of that step (an event whose step never completes is never sent).
    """

    type: str
    data: Mapping[str, Any]
    pos: Position
    type_pos: Position
    after: timedelta = timedelta(0)
    after_step: str | None = None
    after_step_pos: Position | None = None
    id: str | None = None

    def describe(self, index: int) -> str:
        """``events[1] (slack.approval)``: how messages name this event."""
        return f"events[{index}] ({self.type})"


@dataclass(frozen=True)
class ScriptedTask:
    """A person's answer to a task, given ``after`` past the moment the task opened.

    ``step`` is the path of the asking step (``review``, ``checks[1].approve``); ``by`` the
    principal answering (checked against the task's ``assign`` like any completion; None:
    the harness's own, ``tester``).
    """

    step: str
    outcome: str
    pos: Position
    by: str | None = None
    after: timedelta = timedelta(0)
    data: Mapping[str, Any] = field(default_factory=dict)

    def describe(self, index: int) -> str:
        """``tasks[0] (review)``: how messages name this answer."""
        return f"tasks[{index}] ({self.step})"


@dataclass(frozen=True)
class Expectation:
    """One thing the run must come to.

    ``kind`` is a key of ``expect:``; ``key`` the binding path (``bindings``) or the action
    (``calls``), None for the others.
    """

    kind: str
    expected: Any
    pos: Position
    key: str | None = None

    @property
    def label(self) -> str:
        """How reports name it: ``exit``, ``bindings approval.status``, ``calls slack.post``."""
        return self.kind if self.key is None else f"{self.kind} {self.key}"


@dataclass(frozen=True)
class Downtime:
    """A span of virtual time in which every worker is stopped: nothing executes (events and
    answers still arrive), and what fell due meanwhile is done when the workers are back —
    late, and for schedules as their ``catch_up`` says."""

    begins: datetime
    ends: datetime
    pos: Position

    def covers(self, instant: datetime) -> bool:
        """Whether the workers are stopped at ``instant``."""
        return self.begins <= instant < self.ends


RunIdentity: TypeAlias = tuple[str, str | None, datetime | None]
"""What names a run a trigger started: its flow, its target, its occurrence's instant."""


@dataclass(frozen=True)
class ExpectedRun:
    """A run the scenario expects a trigger to start, named by its flow and its ``target``
    (an event trigger's) or ``scheduled_at`` (a schedule occurrence's), with what it must
    come to (``expectations``: the run-level kinds, and ``inputs``)."""

    flow: str
    pos: Position
    flow_pos: Position
    target: str | None = None
    scheduled_at: datetime | None = None
    expectations: tuple[Expectation, ...] = ()

    def identity(self) -> RunIdentity:
        """What names the run: its flow, its target and its occurrence instant."""
        return self.flow, self.target, self.scheduled_at

    def describe(self, index: int) -> str:
        """``runs[0] (deploy acme/web#7)``: how messages name this run."""
        return f"runs[{index}] ({describe_identity(self.identity())})"


def describe_identity(identity: RunIdentity) -> str:
    """``deploy acme/web#7``, ``report at 2026-10-26T08:00:00.000Z``: a run's name in
    messages."""
    flow, target, scheduled_at = identity
    return " ".join([flow, *([target] if target is not None else []),
                     *([f"at {iso(scheduled_at)}"] if scheduled_at is not None else [])])


@dataclass(frozen=True)
class Scenario:
    """A loaded, validated scenario file.

    ``flow`` is a path relative to the project root (``flows/x.yaml``) or a flow name; None
    when the scenario starts no run of its own (its runs are those triggers start). The
    project is the one whose ``tarry.toml`` lies nearest above the scenario file.
    """

    name: str
    path: str
    flow: str | None
    flow_pos: Position
    expectations: tuple[Expectation, ...]
    description: str = ""
    inputs: Mapping[str, Any] = field(default_factory=dict)
    inputs_pos: Position | None = None
    target: str | None = None
    start: datetime | None = None
    horizon: timedelta = DEFAULT_HORIZON
    stubs: tuple[Stub, ...] = ()
    flow_stubs: tuple[FlowStub, ...] = ()
    """Called flows whose child runs end at once with a scripted outcome (``stub_flows``)."""
    events: tuple[ScriptedEvent, ...] = ()
    tasks: tuple[ScriptedTask, ...] = ()
    checks: tuple[CheckScript, ...] = ()
    schedules: Mapping[str, Position] = field(default_factory=dict)
    """The flows whose schedule triggers fire (until the horizon), each where it is named."""
    downtime: tuple[Downtime, ...] = ()
    """When every worker is stopped, in order."""
    runs: tuple[ExpectedRun, ...] = ()
    """The runs triggers must start, in the order they are created."""
    runs_pos: Position | None = None

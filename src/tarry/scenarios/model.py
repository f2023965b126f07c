"""The typed form of a scenario file, as the loader produces it and the runner reads it.

A scenario names a flow and the inputs to start it with, replaces some actions by stubs,
scripts events and people's answers to tasks at virtual instants, and lists what the run
must come to. Every part keeps the :class:`~tarry.language.model.Position` it was written
at, so a problem found later (a flow that does not exist, an expectation that failed) points
back into the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeAlias

from tarry.language.model import Position

__all__ = [
    "DEFAULT_HORIZON",
    "Answer",
    "Expectation",
    "Scenario",
    "ScriptedEvent",
    "ScriptedTask",
    "Stub",
    "StubFailure",
]

DEFAULT_HORIZON = timedelta(days=400)
"""How much virtual time a scenario may take before it stops (its run may still be waiting)."""

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
class Scenario:
    """A loaded, validated scenario file.

    ``flow`` is a path relative to the project root (``flows/x.yaml``) or a flow name; the
    project is the one whose ``tarry.toml`` lies nearest above the scenario file.
    """

    name: str
    path: str
    flow: str
    flow_pos: Position
    expectations: tuple[Expectation, ...]
    description: str = ""
    inputs: Mapping[str, Any] = field(default_factory=dict)
    inputs_pos: Position | None = None
    target: str | None = None
    start: datetime | None = None
    horizon: timedelta = DEFAULT_HORIZON
    stubs: tuple[Stub, ...] = ()
    events: tuple[ScriptedEvent, ...] = ()
    tasks: tuple[ScriptedTask, ...] = ()

"""Running one scenario: the real engine on a virtual clock, a store of its own, stubs, events.

:func:`run_scenario` opens a :class:`~tarry.testing.Harness` over the scenario's project (its
flows, manifests and actions, the stubs replacing actions of the same name) with a fresh store,
starts the run at the scenario's virtual start instant and drives it:

1. execute everything due at the current instant;
2. send the scripted events whose instant has come, in file order (at one instant, the
   engine's own wake-ups come first, then the events), and go back to 1;
3. stop when the run has ended, when nothing is due and no event is pending, or at the
   horizon; otherwise move the clock to the earliest next wake-up or event instant.

A scripted answer to a task (``tasks:``) is given ``after`` past the moment its step opened
the task, as its principal (``as``, default ``tester``), exactly as ``tarry tasks complete``
would: one that is refused (not assigned, an outcome or data that does not fit, past the
deadline) or whose task never opened fails the scenario with the reason.

An event anchored on a step (``after_step``) gets its instant when that step first
completes. An event that could not be sent (its step never completed, the run ended first,
its instant lay past the horizon) fails the scenario. Then every expectation is compared
(:mod:`tarry.scenarios.compare`) and all mismatches are returned.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from tarry.actions import ActionContext, StepFailure
from tarry.clock import iso
from tarry.config import Settings, load_settings
from tarry.errors import LoadError, Problem, TarryError
from tarry.model import EventState
from tarry.scenarios.compare import Mismatch, Observed, compare
from tarry.scenarios.model import (
    Answer,
    Scenario,
    ScriptedEvent,
    ScriptedTask,
    Stub,
    StubFailure,
)
from tarry.scenarios.resolve import resolve_flow
from tarry.testing import TESTER, Harness

__all__ = ["ScenarioResult", "project_settings", "run_scenario"]

_EVENTS_LISTED = 100_000
"""How many stored events are looked at for the scripted events' final states (all of them)."""


@dataclass(frozen=True)
class ScenarioResult:
    """What running one scenario gave.

    ``problems`` non-empty means it could not run (its flow is missing or refused, inputs do
    not fit, an event type is not declared); otherwise ``mismatches`` lists every failed
    expectation. ``document`` is the run document, with history, when the run started.
    """

    scenario: Scenario
    seconds: float
    mismatches: tuple[Mismatch, ...] = ()
    problems: tuple[Problem, ...] = ()
    document: Mapping[str, Any] | None = field(default=None, repr=False)

    @property
    def passed(self) -> bool:
        """Whether it ran and every expectation held."""
        return not self.mismatches and not self.problems


def project_settings(scenario_path: Path) -> Settings:
    """The settings of the project a scenario file belongs to: the nearest ``tarry.toml`` above
    it, or (without one) the project of the working directory."""
    settings = load_settings(scenario_path.resolve().parent)
    return settings if settings.config_file is not None else load_settings()


async def run_scenario(scenario: Scenario, project: Settings, *, directory: Path,
                       store_url: str | None = None,
                       stopwatch: Callable[[], float] = time.perf_counter) -> ScenarioResult:
    """Run ``scenario`` against ``project`` with a store in ``directory`` (or ``store_url``).

    The store must be empty: the scenario's run is the only thing in it (the run has ended
    when nothing in the store is due any more). ``stopwatch`` measures the wall time it took
    (seconds, any origin).
    """
    began = stopwatch()
    stubs = {stub.action: _StubbedAction(stub) for stub in scenario.stubs}
    harness = Harness(directory, start=scenario.start, store_url=store_url, project=project,
                      actions={name: stubbed.answer for name, stubbed in stubs.items()})
    try:
        try:
            flow = resolve_flow(scenario, harness.engine, project.root)
        except LoadError as exc:
            return ScenarioResult(scenario, stopwatch() - began, problems=tuple(exc.problems))
        run_id = harness.start(flow, copy.deepcopy(dict(scenario.inputs)),
                               target=scenario.target)
        observed = await _Drive(harness, run_id, scenario, stubs).observe()
    finally:
        harness.close()
    return ScenarioResult(scenario, stopwatch() - began, compare(scenario, observed),
                          document=observed.document)


class _StubbedAction:
    """A stub's answers, one per call (the last repeating), and how many calls it had."""

    def __init__(self, stub: Stub) -> None:
        self.answers = stub.answers
        self.calls = 0

    async def answer(self, args: dict[str, Any], ctx: ActionContext) -> Mapping[str, Any] | None:
        """The next answer: a copy of its result, or :class:`StepFailure` for a failing one."""
        answer: Answer = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        if isinstance(answer, StubFailure):
            raise StepFailure(answer.message, type=answer.type)
        return copy.deepcopy(answer)


class _Drive:
    """Drives one run on the harness clock, sending the scripted events at their instants."""

    def __init__(self, harness: Harness, run_id: str, scenario: Scenario,
                 stubs: Mapping[str, _StubbedAction]) -> None:
        self.harness = harness
        self.run_id = run_id
        self.scenario = scenario
        self.stubs = stubs
        self.start = harness.clock.now()
        self.limit = self.start + scenario.horizon
        self.pending = dict(enumerate(scenario.events))
        self.completed: dict[str, datetime] = {}
        self.sent: dict[int, tuple[str, EventState]] = {}
        self.answers = dict(enumerate(scenario.tasks))
        self.opened: dict[str, datetime] = {}
        self.refused: dict[int, str] = {}

    async def observe(self) -> Observed:
        """Drive the run to its end (or the horizon) and gather what it came to."""
        await self._drive()
        states = {event.id: event.state.value
                  for event in self.harness.engine.events(limit=_EVENTS_LISTED)}
        return Observed(
            document=self.harness.document(self.run_id),
            calls={name: stub.calls for name, stub in self.stubs.items()},
            event_states=tuple(self._final_state(index, states)
                               for index in range(len(self.scenario.events))),
            unsent={index: self._why_unsent(event) for index, event in self.pending.items()},
            unanswered={**self.refused, **{index: self._why_unanswered(task)
                                           for index, task in self.answers.items()}},
        )

    async def _drive(self) -> None:
        while True:
            await self.harness.run_due()
            self._note_completions()
            if self._send_due() or self._answer_due():
                continue
            wake = self.harness.engine.store.next_due_at()
            if wake is None:  # the store holds this run only: nothing due, it has ended
                return
            following = min(wake, self._next_event_instant() or wake,
                            self._next_answer_instant() or wake)
            if following > self.limit:
                return
            self.harness.clock.set(max(following, self.harness.clock.now()))

    def _instant(self, event: ScriptedEvent) -> datetime | None:
        if event.after_step is None:
            return self.start + event.after
        completed = self.completed.get(event.after_step)
        return None if completed is None else completed + event.after

    def _next_event_instant(self) -> datetime | None:
        instants = [instant for event in self.pending.values()
                    if (instant := self._instant(event)) is not None]
        return min(instants, default=None)

    def _send_due(self) -> bool:
        """Send every pending event whose instant has come; whether any was."""
        now = self.harness.clock.now()
        due = sorted((instant, index) for index, event in self.pending.items()
                     if (instant := self._instant(event)) is not None and instant <= now)
        for _instant, index in due:
            event = self.pending.pop(index)
            record = self.harness.send(event.type, copy.deepcopy(dict(event.data)), id=event.id)
            self.sent[index] = (record.id, record.state)
        return bool(due)

    def _note_completions(self) -> None:
        """Remember when each step a pending event is anchored on first completed, and when
        each task a pending answer is for opened."""
        if not self.answers and not any(event.after_step for event in self.pending.values()):
            return
        for entry in self.harness.engine.store.history(self.run_id):
            if entry.kind == "step.completed" and entry.step is not None:
                self.completed.setdefault(entry.step, entry.at)
            if (entry.kind == "wait.registered" and entry.data.get("kind") == "task"
                    and entry.step is not None):
                self.opened.setdefault(entry.step, entry.at)

    def _answer_instant(self, task: ScriptedTask) -> datetime | None:
        opened = self.opened.get(task.step)
        return None if opened is None else opened + task.after

    def _next_answer_instant(self) -> datetime | None:
        instants = [instant for task in self.answers.values()
                    if (instant := self._answer_instant(task)) is not None]
        return min(instants, default=None)

    def _answer_due(self) -> bool:
        """Give every pending answer whose instant has come; whether any was."""
        now = self.harness.clock.now()
        due = sorted((instant, index) for index, task in self.answers.items()
                     if (instant := self._answer_instant(task)) is not None and instant <= now)
        for _instant, index in due:
            task = self.answers.pop(index)
            try:
                self.harness.complete_task(self.run_id, task.step, outcome=task.outcome,
                                           data=copy.deepcopy(dict(task.data)),
                                           by=task.by or TESTER)
            except TarryError as refused:
                self.refused[index] = f"refused: {refused}"
        return bool(due)

    def _why_unanswered(self, task: ScriptedTask) -> str:
        instant = self._answer_instant(task)
        if instant is None:
            return f"never answered: step '{task.step}' never opened a task"
        if instant > self.limit:
            return (f"not answered: its instant {iso(instant)} lies past the horizon "
                    f"({iso(self.limit)})")
        return f"not answered: the run had ended before its instant {iso(instant)}"

    def _final_state(self, index: int, states: Mapping[str, str]) -> str | None:
        if index not in self.sent:
            return None
        event_id, state = self.sent[index]
        return state.value if state is EventState.DUPLICATE else states.get(event_id)

    def _why_unsent(self, event: ScriptedEvent) -> str:
        instant = self._instant(event)
        if instant is None:
            return f"never sent: step '{event.after_step}' never completed"
        if instant > self.limit:
            return (f"not sent: its instant {iso(instant)} lies past the horizon "
                    f"({iso(self.limit)})")
        return f"not sent: the run had ended before its instant {iso(instant)}"

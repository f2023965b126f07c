"""Running one scenario: the real engine on a virtual clock, a store of its own, stubs, events.

:func:`run_scenario` opens a :class:`~tarry.testing.Harness` over the scenario's project (its
flows, manifests and actions, the stubs replacing actions of the same name, the scenario's
checks replacing the project's of the same name) with a fresh store, starts the run (when the
scenario names a flow) at the scenario's virtual start instant and drives it:

1. execute everything due at the current instant (schedule occurrences included);
2. send the scripted events whose instant has come, in file order (at one instant, the
   engine's own wake-ups come first, then the events), and go back to 1;
3. stop when nothing is due (no run, no event still to send, no schedule firing before the
   horizon), or at the horizon; otherwise move the clock to the earliest next wake-up,
   event instant or schedule occurrence.

An event sent starts the runs of the triggers it matches, as ``tarry send`` does; only the
flows of ``schedules`` have their schedule triggers fire. In a ``downtime`` step 1 is skipped
(no worker runs; events still arrive) and the clock goes on to the downtime's end. After the
scenario's own run has ended, no event or answer is sent any more: one still pending then was
scripted too late.

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
import random
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
from tarry.model import EventRecord, EventState
from tarry.scenarios.compare import Mismatch, Observed, compare
from tarry.scenarios.model import (
    Answer,
    CheckStub,
    RealCheck,
    Scenario,
    ScriptedEvent,
    ScriptedTask,
    Stub,
    StubFailure,
)
from tarry.scenarios.resolve import check_path, resolve_flow
from tarry.scenarios.started import StartedRun, event_triggered, started_none, started_runs
from tarry.scenarios.stubbedflows import stubbed_flows
from tarry.testing import TESTER, Harness

__all__ = ["ScenarioResult", "project_settings", "run_scenario"]

_EVENTS_LISTED = 100_000
"""How many stored events are looked at for the scripted events' final states (all of them)."""
_RUNS_LISTED = 100_000
"""How many stored runs are looked at for the runs triggers started (all of them)."""
_JITTER_SEED = 0
"""The seed of the hold checks' jitter: a scenario's check instants are the same each run."""


@dataclass(frozen=True)
class ScenarioResult:
    """What running one scenario gave.

    ``problems`` non-empty means it could not run (its flow is missing or refused, inputs do
    not fit, an event type is not declared); otherwise ``mismatches`` lists every failed
    expectation. ``document`` is the run document, with history, when the scenario started a
    run; ``started``, the runs triggers started.
    """

    scenario: Scenario
    seconds: float
    mismatches: tuple[Mismatch, ...] = ()
    problems: tuple[Problem, ...] = ()
    document: Mapping[str, Any] | None = field(default=None, repr=False)
    started: tuple[StartedRun, ...] = field(default=(), repr=False)

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

    The store must be empty: the scenario's runs are the only things in it (they have
    ended when nothing in the store is due any more). ``stopwatch`` measures the wall time it
    took (seconds, any origin).
    """
    began = stopwatch()
    stubs = {stub.action: _StubbedAction(stub) for stub in scenario.stubs}
    harness = _harness(scenario, project, directory, store_url, stubs)
    try:
        try:
            flow = resolve_flow(scenario, harness.engine, project.root, project.checks)
        except LoadError as exc:
            return ScenarioResult(scenario, stopwatch() - began, problems=tuple(exc.problems))
        run_id = None if flow is None else harness.start(
            flow, copy.deepcopy(dict(scenario.inputs)), target=scenario.target)
        observed = await _Drive(harness, run_id, scenario, stubs).observe()
    finally:
        harness.close()
    return ScenarioResult(scenario, stopwatch() - began, compare(scenario, observed),
                          document=observed.document if run_id is not None else None,
                          started=observed.started)


def _harness(scenario: Scenario, project: Settings, directory: Path, store_url: str | None,
             stubs: Mapping[str, _StubbedAction]) -> Harness:
    """The project's engine on a virtual clock from the scenario's start: its stubs replace
    actions, its checks the project's (a real one at its path, a stubbed one answering by
    instant), the jitter of check intervals seeded; only its schedules fire."""
    real = {check.name: check_path(check, project.root) for check in scenario.checks
            if isinstance(check, RealCheck)}
    return Harness(directory, start=scenario.start, store_url=store_url, project=project,
                   flow_stubs=stubbed_flows(scenario.flow_stubs, project),
                   actions={name: stubbed.answer for name, stubbed in stubs.items()},
                   checks={**project.checks, **real},
                   check_stubs={check.name: check.answer_at for check in scenario.checks
                                if isinstance(check, CheckStub)},
                   rng=random.Random(_JITTER_SEED), schedules=tuple(scenario.schedules))


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
    """Drives the scenario's runs on the harness clock, sending the scripted events at their
    instants; ``run_id`` is the scenario's own run (None when it started none). A run that
    continues as new (a Python flow's ``ctx.continue_as_new``) is followed: the scenario's
    own run is then the last of its chain, and its steps those of every run of the chain."""

    def __init__(self, harness: Harness, run_id: str | None, scenario: Scenario,
                 stubs: Mapping[str, _StubbedAction]) -> None:
        self.harness = harness
        self.run_id = run_id
        self.scenario = scenario
        self.stubs = stubs
        self.start = harness.clock.now()
        self.limit = self.start + scenario.horizon
        self.pending = dict(enumerate(scenario.events))
        self.completed: dict[str, datetime] = {}
        self.sent: dict[int, EventRecord] = {}
        self.answers = dict(enumerate(scenario.tasks))
        self.opened: dict[str, datetime] = {}
        self.refused: dict[int, str] = {}
        self.ended_at: datetime | None = None
        """When the scenario's own run ended, as last looked at."""

    async def observe(self) -> Observed:
        """Drive the run to its end (or the horizon) and gather what it came to."""
        await self._drive()
        states = {event.id: event.state.value
                  for event in self.harness.engine.events(limit=_EVENTS_LISTED)}
        own = self._own()
        return Observed(
            document=self.harness.document(own) if own is not None else {},
            started=self._started(),
            quiet=self._quiet(),
            window=(self.start, self.limit),
            calls={name: stub.calls for name, stub in self.stubs.items()},
            event_states=tuple(self._final_state(index, states)
                               for index in range(len(self.scenario.events))),
            unsent={index: self._why_unsent(event) for index, event in self.pending.items()},
            unanswered={**self.refused, **{index: self._why_unanswered(task)
                                           for index, task in self.answers.items()}},
        )

    def _started(self) -> tuple[StartedRun, ...]:
        """The runs triggers started, with the scripted event that started each."""
        causes = {run_id: self.scenario.events[index].describe(index)
                  for index, record in sorted(self.sent.items()) for run_id in record.started}
        chain = set(self._chain())
        others = [record.id for record in self.harness.engine.runs(limit=_RUNS_LISTED)
                  if record.id not in chain]
        return started_runs([self.harness.document(run_id) for run_id in others], causes)

    def _quiet(self) -> tuple[str, ...]:
        """Why each scripted event that started no run started none."""
        triggered = event_triggered(self.harness.engine.catalog.available()[0])
        return tuple(started_none(self.scenario.events[index].describe(index), record.type,
                                  record.state, triggered.get(record.type, set()))
                     for index, record in sorted(self.sent.items()) if not record.started)

    async def _drive(self) -> None:
        while True:
            now = self.harness.clock.now()
            if self._back_at(now) is None:  # in a downtime no worker executes anything
                await self.harness.run_due()
            self.ended_at = self._ended_at()
            self._note_completions()
            if self._send_due() or self._answer_due():
                continue
            candidates = [self._worker_wake(now), self._next_event_instant(),
                          self._next_answer_instant()]
            following = min((instant for instant in candidates if instant is not None),
                            default=None)
            if following is None or following > self.limit:
                return
            self.harness.clock.set(max(following, now))

    def _back_at(self, instant: datetime) -> datetime | None:
        """When the workers are back, if ``instant`` falls in a downtime."""
        return next((span.ends for span in self.scenario.downtime if span.covers(instant)),
                    None)

    def _worker_wake(self, now: datetime) -> datetime | None:
        """When a worker next has something to do (a run or a schedule occurrence due); in
        or into a downtime, when the workers are back."""
        due = self.harness.engine.store.next_due_at()
        if due is None:
            return None
        instant = max(due, now)
        return self._back_at(instant) or instant

    def _chain(self) -> list[str]:
        """The scenario's own run and each run it continued as, in order (none: no run)."""
        return [] if self.run_id is None else self.harness.chain(self.run_id)

    def _own(self) -> str | None:
        """The scenario's own run: the last of its chain (None when it started none)."""
        chain = self._chain()
        return chain[-1] if chain else None

    def _ended_at(self) -> datetime | None:
        """When the scenario's own run ended (None: it has not, or there is none)."""
        own = self._own()
        if own is None:
            return None
        record = self.harness.record(own)
        return record.updated_at if record.status.is_terminal else None

    def _open(self, instant: datetime) -> bool:
        """Whether something scripted for ``instant`` is still sent: the scenario's own run
        (if any) had not ended before it."""
        return self.ended_at is None or instant <= self.ended_at

    def _instant(self, event: ScriptedEvent) -> datetime | None:
        if event.after_step is None:
            return self.start + event.after
        completed = self.completed.get(event.after_step)
        return None if completed is None else completed + event.after

    def _next_event_instant(self) -> datetime | None:
        instants = [instant for event in self.pending.values()
                    if (instant := self._instant(event)) is not None and self._open(instant)]
        return min(instants, default=None)

    def _send_due(self) -> bool:
        """Send every pending event whose instant has come; whether any was."""
        now = self.harness.clock.now()
        due = sorted((instant, index) for index, event in self.pending.items()
                     if (instant := self._instant(event)) is not None and instant <= now
                     and self._open(instant))
        for _instant, index in due:
            event = self.pending.pop(index)
            self.sent[index] = self.harness.send(event.type, copy.deepcopy(dict(event.data)),
                                                 id=event.id)
        return bool(due)

    def _note_completions(self) -> None:
        """Remember when each step a pending event is anchored on first completed, and when
        each task a pending answer is for opened."""
        if self.run_id is None or (not self.answers and not any(
                event.after_step for event in self.pending.values())):
            return
        for entry in (entry for run_id in self._chain()
                      for entry in self.harness.engine.store.history(run_id)):
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
                    if (instant := self._answer_instant(task)) is not None
                    and self._open(instant)]
        return min(instants, default=None)

    def _answer_due(self) -> bool:
        """Give every pending answer whose instant has come; whether any was."""
        own = self._own()
        if own is None:  # answers are for the scenario's own run (refused at load)
            return False
        now = self.harness.clock.now()
        due = sorted((instant, index) for index, task in self.answers.items()
                     if (instant := self._answer_instant(task)) is not None and instant <= now
                     and self._open(instant))
        for _instant, index in due:
            task = self.answers.pop(index)
            try:
                self.harness.complete_task(own, task.step, outcome=task.outcome,
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
        record = self.sent[index]
        return record.state.value if record.state is EventState.DUPLICATE \
            else states.get(record.id)

    def _why_unsent(self, event: ScriptedEvent) -> str:
        instant = self._instant(event)
        if instant is None:
            return f"never sent: step '{event.after_step}' never completed"
        if instant > self.limit:
            return (f"not sent: its instant {iso(instant)} lies past the horizon "
                    f"({iso(self.limit)})")
        return f"not sent: the run had ended before its instant {iso(instant)}"

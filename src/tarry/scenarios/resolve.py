"""Checking a loaded scenario against its project: its flows, inputs, event types, steps, checks.

A scenario file can be read on its own; whether ``flow:`` names a flow of the project, whether
the inputs fit it, whether each scripted event type is declared and each step a scenario
refers to exists, whether the flows of ``schedules`` and ``expect.runs`` have such triggers,
and whether each check it stubs or runs is one of the project's needs the project (its flows,
its manifests, its actions plus the stubs, its declared checks). Problems point into the
scenario file, except those of a refused flow, which point into the flow file.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from tarry._suggest import did_you_mean
from tarry.clock import iso
from tarry.engine.runtime import Engine
from tarry.errors import FlowNotFound, LoadError, Problem, RunError
from tarry.holds.doctor import checks_named, path_problem
from tarry.language.inputs import bind_inputs
from tarry.language.model import EventTrigger, Flow, Position, ScheduleTrigger, actions_called
from tarry.scenarios.loader import FLOW_SUFFIXES
from tarry.scenarios.model import Expectation, RealCheck, Scenario
from tarry.triggers.schedule import next_occurrence, occurrences_between

__all__ = ["check_path", "resolve_flow"]

_JUST_BEFORE = timedelta(seconds=1)
_LOOK_BACK = (timedelta(hours=1), timedelta(days=1), timedelta(days=32), timedelta(days=366))
"""The spans in which the occurrence before a mistaken ``scheduled_at`` is looked for."""


def resolve_flow(scenario: Scenario, engine: Engine, root: Path,
                 declared: Collection[str] = ()) -> Flow | None:
    """The flow ``scenario`` runs (None when it starts no run of its own), loaded by
    ``engine``'s catalog; ``root`` is the project root, ``declared`` the checks the project
    declares.

    Raises ``LoadError`` with every problem found.
    """
    flow = None
    if scenario.flow is not None:
        reference = str(root / scenario.flow) if scenario.flow.endswith(FLOW_SUFFIXES) \
            else scenario.flow
        flow = _load(engine, reference, scenario.flow, scenario.flow_pos)
    problems = [*(_input_problems(scenario, flow) if flow else ()),
                *_event_problems(scenario, engine),
                *(_step_problems(flow, _anchored(scenario), "") if flow else ()),
                *(_unstubbed_problems(scenario, flow, engine) if flow else ()),
                *_trigger_problems(scenario, engine),
                *_check_problems(scenario, engine, root, declared)]
    if problems:
        raise LoadError(problems)
    return flow


def check_path(check: RealCheck, root: Path) -> Path:
    """Where the executable of a real check lies: its path, from the project root."""
    return root / check.path


def _load(engine: Engine, reference: str, shown: str, pos: Position, where: str = "") -> Flow:
    """The flow ``reference`` names; ``LoadError`` pointing at ``pos`` (after ``where``)."""
    try:
        return engine.catalog.resolve(reference)
    except FlowNotFound as exc:
        raise LoadError([_problem(pos, f"{where}{exc}")]) from None
    except LoadError as exc:
        refused = _problem(pos, f"{where}the flow '{shown}' is refused at load (its problems "
                                "follow)")
        raise LoadError([refused, *exc.problems]) from None


def _problem(pos: Position, message: str) -> Problem:
    return Problem(pos.file, pos.line, pos.column, message)


def _input_problems(scenario: Scenario, flow: Flow) -> Iterator[Problem]:
    try:
        bind_inputs(flow, scenario.inputs)
    except RunError as exc:
        yield _problem(scenario.inputs_pos or scenario.flow_pos, f"inputs: {exc}")


def _event_problems(scenario: Scenario, engine: Engine) -> Iterator[Problem]:
    for index, event in enumerate(scenario.events):
        if event.type not in engine.manifests:
            declared = ", ".join(sorted(engine.manifests)) or "none"
            yield _problem(event.type_pos, f"events[{index}]: unknown event type "
                                           f"'{event.type}'"
                                           f"{did_you_mean(event.type, engine.manifests)} "
                                           f"(declared: {declared})")


def _anchored(scenario: Scenario) -> list[tuple[str, Position, str]]:
    """The step paths the scenario's own run is referred to by, with where and how."""
    named = [(event.after_step, event.after_step_pos or event.pos, "after_step")
             for event in scenario.events if event.after_step]
    return named + _binding_paths(scenario.expectations)


def _binding_paths(expectations: Sequence[Expectation]) -> list[tuple[str, Position, str]]:
    return [(expectation.key, expectation.pos, "bindings") for expectation in expectations
            if expectation.kind == "bindings" and expectation.key]


def _step_problems(flow: Flow, named: list[tuple[str, Position, str]],
                   prefix: str) -> Iterator[Problem]:
    """``after_step`` and binding paths must start at a step of the flow's top level."""
    steps = [step.id for step in (*flow.body.steps, *flow.body.recover)]
    for path, pos, where in named:
        first = path.split(".")[0].split("[")[0]
        if first not in steps:
            yield _problem(pos, f"{prefix}{where}: flow '{flow.name}' has no step '{first}'"
                                f"{did_you_mean(first, steps)}")


def _unstubbed_problems(scenario: Scenario, flow: Flow, engine: Engine) -> Iterator[Problem]:
    """An action provided elsewhere that the flow calls must be stubbed: nothing here runs
    it."""
    missing = sorted(set(actions_called(flow)) & engine.actions.unprovided())
    for name in missing:
        yield _problem(scenario.flow_pos, f"flow '{flow.name}' calls '{name}', an action "
                                          "provided elsewhere (provided_actions in tarry.toml): "
                                          f"stub it (stub: {{ {name}: … }})")


# --- triggers ---------------------------------------------------------------------------------

def _trigger_problems(scenario: Scenario, engine: Engine) -> Iterator[Problem]:
    """The flows of ``schedules`` have schedule triggers; each run of ``expect.runs`` is one
    of a flow with triggers of its kind (an occurrence only of a flow whose schedules fire)."""
    for index, (name, pos) in enumerate(scenario.schedules.items()):
        where = f"schedules[{index}]: "
        try:
            flow = _load(engine, name, name, pos, where)
        except LoadError as exc:
            yield from exc.problems
            continue
        if not _has(flow, ScheduleTrigger):
            yield _problem(pos, f"{where}flow '{name}' has no schedule trigger")
    for index, run in enumerate(scenario.runs):
        try:
            flow = _load(engine, run.flow, run.flow, run.flow_pos, f"runs[{index}]: ")
        except LoadError as exc:
            yield from exc.problems
            continue
        yield from _run_problems(scenario, flow, index)


def _run_problems(scenario: Scenario, flow: Flow, index: int) -> Iterator[Problem]:
    run = scenario.runs[index]
    where = f"runs[{index}]: "
    if not flow.triggers:
        yield _problem(run.flow_pos, f"{where}flow '{flow.name}' has no triggers: 'runs' lists "
                                     "the runs triggers start")
    elif run.scheduled_at is None and not _has(flow, EventTrigger):
        yield _problem(run.pos, f"{where}flow '{flow.name}' is started by its schedule only: "
                                "name its run by 'scheduled_at'")
    elif run.scheduled_at is not None and not _has(flow, ScheduleTrigger):
        yield _problem(run.pos, f"{where}flow '{flow.name}' has no schedule trigger: no run "
                                "of it has a 'scheduled_at'")
    elif run.scheduled_at is not None and flow.name not in scenario.schedules:
        yield _problem(run.pos, f"{where}'scheduled_at' names an occurrence of flow "
                                f"'{flow.name}', whose schedule does not fire in this "
                                "scenario (list the flow in 'schedules')")
    elif run.scheduled_at is not None:
        yield from _occurrence_problems(flow, run.scheduled_at, run.pos, where)
    yield from _step_problems(flow, _binding_paths(run.expectations), where)


def _occurrence_problems(flow: Flow, at: datetime, pos: Position,
                         where: str) -> Iterator[Problem]:
    """``at`` must be an occurrence of one of the flow's schedules (its local time, DST
    included); otherwise the nearest occurrences are named."""
    schedules = [trigger for trigger in flow.triggers if isinstance(trigger, ScheduleTrigger)]
    if any(next_occurrence(trigger, at - _JUST_BEFORE) == at for trigger in schedules):
        return
    nearest = sorted({instant for trigger in schedules
                      for instant in (*_previous(trigger, at), next_occurrence(trigger, at))})
    crons = "; ".join(f"{trigger.cron} in {trigger.timezone}" for trigger in schedules)
    yield _problem(pos, f"{where}{iso(at)} is not an occurrence of the schedule of flow "
                        f"'{flow.name}' ({crons}); the nearest are "
                        f"{' and '.join(iso(instant) for instant in nearest)}")


def _previous(trigger: ScheduleTrigger, at: datetime) -> list[datetime]:
    """The last occurrence before ``at`` within a year (none: an empty list), looked for in
    ever longer spans so that a frequent schedule is not listed at length."""
    for back in _LOOK_BACK:
        found = occurrences_between(trigger, at - back, at)
        if found:
            return found[-1:]
    return []


def _has(flow: Flow, kind: type[EventTrigger] | type[ScheduleTrigger]) -> bool:
    return any(isinstance(trigger, kind) for trigger in flow.triggers)


# --- checks -----------------------------------------------------------------------------------

def _check_problems(scenario: Scenario, engine: Engine, root: Path,
                    declared: Collection[str]) -> Iterator[Problem]:
    """Each check is one the project declares or a flow names; a real one is executable."""
    named = {name for flow in engine.catalog.available()[0] for name, _ in checks_named(flow)}
    known = named | set(declared)
    for check in scenario.checks:
        if check.name not in known:
            yield _problem(check.pos, f"check '{check.name}': no flow holds on or asks a check "
                                      "of this name and the project declares none"
                                      f"{did_you_mean(check.name, known)}")
        if isinstance(check, RealCheck) and check.path.strip():
            path = check_path(check, root)
            problem = path_problem(path)
            if problem is not None:
                yield _problem(check.pos, f"check '{check.name}': {path} {problem}")

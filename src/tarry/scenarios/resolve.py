"""Checking a loaded scenario against its project: the flow, its inputs, event types, steps.

A scenario file can be read on its own; whether ``flow:`` names a flow of the project, whether
the inputs fit it, whether each scripted event type is declared and each step a scenario
refers to exists needs the project (its flows, its manifests, its actions plus the stubs).
Problems point into the scenario file, except those of a refused flow, which point into the
flow file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from tarry._suggest import did_you_mean
from tarry.engine.runtime import Engine
from tarry.errors import FlowNotFound, LoadError, Problem, RunError
from tarry.language.inputs import bind_inputs
from tarry.language.model import Flow, Position
from tarry.scenarios.loader import FLOW_SUFFIXES
from tarry.scenarios.model import Scenario

__all__ = ["resolve_flow"]


def resolve_flow(scenario: Scenario, engine: Engine, root: Path) -> Flow:
    """The flow ``scenario`` runs, loaded by ``engine``'s catalog; ``root`` is the project root.

    Raises ``LoadError`` with every problem found.
    """
    reference = str(root / scenario.flow) if scenario.flow.endswith(FLOW_SUFFIXES) \
        else scenario.flow
    try:
        flow = engine.catalog.resolve(reference)
    except FlowNotFound as exc:
        raise LoadError([_problem(scenario.flow_pos, str(exc))]) from None
    except LoadError as exc:
        refused = _problem(scenario.flow_pos, f"the flow '{scenario.flow}' is refused at load "
                                              "(its problems follow)")
        raise LoadError([refused, *exc.problems]) from None
    problems = [*_input_problems(scenario, flow), *_event_problems(scenario, engine),
                *_step_problems(scenario, flow)]
    if problems:
        raise LoadError(problems)
    return flow


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


def _step_problems(scenario: Scenario, flow: Flow) -> Iterator[Problem]:
    """``after_step`` and binding paths must start at a step of the flow's top level."""
    steps = [step.id for step in (*flow.body.steps, *flow.body.recover)]
    named = [(event.after_step, event.after_step_pos or event.pos, "after_step")
             for event in scenario.events if event.after_step]
    named += [(expectation.key, expectation.pos, "bindings")
              for expectation in scenario.expectations
              if expectation.kind == "bindings" and expectation.key]
    for path, pos, where in named:
        first = path.split(".")[0].split("[")[0]
        if first not in steps:
            yield _problem(pos, f"{where}: flow '{flow.name}' has no step '{first}'"
                                f"{did_you_mean(first, steps)}")

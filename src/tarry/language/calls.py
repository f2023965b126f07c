"""Checking the ``call`` steps of a project's flows against the flows it has: pure, over
loaded flows.

Loading a flow does not look at other flows (a flow may be added after the one that calls
it, and a run whose called flow is missing fails its step ``child-not-started``); ``tarry
validate`` checks every call of the project instead: the called flow must exist, and the
inputs a call names (when written as a mapping) must be inputs that flow declares, with
every required one given.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import fields, is_dataclass

from tarry._suggest import did_you_mean
from tarry.errors import Problem
from tarry.language.model import Call, Flow

__all__ = ["call_problems", "calls_in"]


def calls_in(node: object) -> Iterator[Call]:
    """Every ``call`` a flow (or any node of one) makes, in the order written."""
    if isinstance(node, Call):
        yield node
    elif is_dataclass(node) and not isinstance(node, type):
        for each in fields(node):
            yield from calls_in(getattr(node, each.name))
    elif isinstance(node, tuple):
        for item in node:
            yield from calls_in(item)


def call_problems(flow: Flow, known: Mapping[str, Flow]) -> list[Problem]:
    """What is wrong with the calls of ``flow``, given the project's flows by name."""
    problems: list[Problem] = []
    for call in calls_in(flow.body):
        where = call.pos
        called = known.get(call.flow)
        if called is None:
            problems.append(Problem(where.file, where.line, where.column, (
                f"flow '{call.flow}' is not in this project{did_you_mean(call.flow, known)}; "
                "a call starts a flow of the flows folder or of the app")))
            continue
        for message in _input_problems(call, called):
            problems.append(Problem(where.file, where.line, where.column, message))
    return problems


def _input_problems(call: Call, called: Flow) -> Iterator[str]:
    declared = called.inputs
    for name in call.inputs:
        if name not in declared:
            known = f" (it declares {', '.join(declared)})" if declared else (
                " (it declares none)")
            hint = did_you_mean(name, declared) or known
            yield f"flow '{called.name}' has no input '{name}'{hint}"
    for name, spec in declared.items():
        if spec.required and not spec.has_default and name not in call.inputs:
            yield f"missing input '{name}' of flow '{called.name}' (it is required)"

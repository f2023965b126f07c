"""Fuzzing the loaders of flows, event manifests and scenarios: whatever the text, each returns
its object or raises its own ``LoadError``, every problem placed at a line and column of the
file, and none runs away with the stack or the memory (the inputs that once did are replayed
on every run)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fuzz_support import HOSTILE_YAML, fuzz, outcome, yaml_documents
from hypothesis import example, given

from tarry.errors import LoadError
from tarry.language.loader import parse_flow
from tarry.language.manifests import parse_manifests
from tarry.scenarios import parse_scenario

MANIFESTS = parse_manifests("events:\n  e:\n    correlate_on: [k]\n", "events.yaml")


def flow(text: str) -> object:
    """A flow checked against a manifest and one user action, as a project loads it."""
    return parse_flow(text, "x.yaml", actions=["probe"], manifests=MANIFESTS)


LOADERS: dict[str, Callable[[str], object]] = {
    "flow": flow,
    "manifest": lambda text: parse_manifests(text, "x.yaml"),
    "scenario": lambda text: parse_scenario(text, "x.yaml"),
}


def assert_loads_or_refuses_with_positions(load: Callable[[str], object], text: str) -> None:
    """``load(text)`` gives its object, or a LoadError whose every problem is placed."""
    result = outcome(lambda: load(text))
    if isinstance(result, Exception):
        assert isinstance(result, LoadError), repr(result)
        assert result.problems
        for problem in result.problems:
            assert problem.file == "x.yaml"
            assert problem.line >= 1
            assert problem.column >= 1
            assert problem.message


def with_corpus(test: Callable[[str, str], None]) -> Callable[[str, str], None]:
    """``test`` with every input that once broke a loader replayed as an example."""
    for text in HOSTILE_YAML.values():
        test = example(text=text)(test)
    return test


@pytest.mark.parametrize("kind", LOADERS)
@fuzz(100)
@given(text=yaml_documents())
@with_corpus
def test_a_loader_refuses_any_text_only_with_its_own_positioned_errors(
        kind: str, text: str) -> None:
    assert_loads_or_refuses_with_positions(LOADERS[kind], text)

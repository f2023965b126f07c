"""Comparing expected and actual values, and walking binding paths (pure functions)."""

from __future__ import annotations

from typing import Any

import pytest

import tarry.scenarios
from tarry.scenarios import Missing
from tarry.scenarios.compare import json_equal, lookup

BINDINGS = {"approval": {"status": "received", "event": None},
            "polls": [{"check": {"status": "queued"}}, {"check": {"status": "indexed"}}],
            "odd-key": {"a-b": 1}}


@pytest.mark.parametrize(("path", "value"), [
    ("approval.status", "received"),
    ("approval.event", None),
    ("polls[1].check.status", "indexed"),
    ("polls[0]", {"check": {"status": "queued"}}),
    ("odd-key.a-b", 1),
    ("nothing", Missing("nothing")),
    ("approval.event.approved", Missing("approval.event.approved")),
    ("polls[2].check", Missing("polls[2]")),
    ("approval[0]", Missing("approval[0]")),
    ("polls.check", Missing("polls.check")),
])
def test_lookup_walks_keys_and_indexes(path: str, value: Any) -> None:
    assert lookup(BINDINGS, path) == value


@pytest.mark.parametrize(("left", "right", "equal"), [
    (1, 1.0, True), (True, 1, False), (0, False, False), (None, None, True),
    ("1", 1, False), ({"a": [1, True]}, {"a": [1.0, True]}, True),
    ({"a": 1}, {"a": 1, "b": 2}, False), ([1, 2], [2, 1], False), ([], {}, False),
    ("ab", ["a", "b"], False), (Missing("a"), None, False),
])
def test_json_equal_keeps_booleans_apart_from_numbers(left: Any, right: Any,
                                                      equal: bool) -> None:
    assert json_equal(left, right) is equal
    assert json_equal(right, left) is equal


def test_the_package_exports_are_pinned() -> None:
    assert tarry.scenarios.__all__ == [
        "CheckPhase", "CheckStub", "Downtime", "Expectation", "ExpectedRun", "Mismatch", "Missing",
        "Observed", "RealCheck", "Scenario", "ScenarioResult", "ScriptedEvent", "ScriptedTask",
        "StartedRun", "Stub", "StubFailure", "junit_xml", "load_scenario", "parse_scenario",
        "project_settings", "result_lines", "run_scenario", "summary"]

"""What tarry test reports: a verdict line per scenario, each failure with expected and actual,
a summary, and JUnit XML."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from xml.etree import ElementTree

import pytest
from scenario_projects import APPROVED, ScenarioProject

from tarry.language.model import Position
from tarry.scenarios import (
    Mismatch,
    Missing,
    ScenarioResult,
    junit_xml,
    result_lines,
    summary,
)
from tarry.scenarios.report import describe_value, mismatch_lines

WRONG = """\
scenario: wrong
flow: deal-approval
inputs: { deal: { name: ACME } }
stub: { slack.post: { ts: t1 } }
expect:
  exit: approved
  bindings: { approval.event.approved: true, ask: { ts: t2 } }
  history: [created, started, step.started, step.completed, step.started, wait.registered,
            resumed, event.received, step.completed]
  history_contains: [started, event.received]
"""

MISSING_FLOW = """\
scenario: typo
flow: deal-aproval
expect: { status: succeeded }
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ScenarioProject:
    monkeypatch.chdir(tmp_path)
    return ScenarioProject.create(tmp_path)


async def run(project: ScenarioProject, name: str, text: str,
              seconds: float) -> ScenarioResult:
    """Run ``text`` as ``scenarios/<name>.yaml``; pretend it took ``seconds``."""
    result = await project.run(project.scenario(name, text))
    return dataclasses.replace(result, seconds=seconds)


async def test_a_passing_scenario_is_one_line(project: ScenarioProject) -> None:
    result = await run(project, "approved", APPROVED, 0.034)
    assert result_lines(result) == ["PASS approved-after-two-hours (0.03s)"]


async def test_a_failing_scenario_lists_each_failed_expectation(
        project: ScenarioProject) -> None:
    result = await run(project, "wrong", WRONG, 0.5)
    assert "\n".join(result_lines(result)) + "\n" == """\
FAIL wrong (0.50s)
  scenarios/wrong.yaml:6:9: exit: expected "approved", got "no-answer"
  scenarios/wrong.yaml:7:15: bindings approval.event.approved: expected true, got nothing \
('approval.event.approved' does not exist)
  scenarios/wrong.yaml:7:46: bindings ask: expected {"ts": "t2"}, got {"ts": "t1"}
  scenarios/wrong.yaml:8:12: history: differs (- expected, + actual):
      created
      started
      step.started
      step.completed
      step.started
      wait.registered
      resumed
    - event.received
    + wait.timeout
      step.completed
    + step.skipped
    + step.started
    + succeeded
  scenarios/wrong.yaml:10:21: history_contains: no 'event.received' after 'started' in the \
history, which was:
      created
      started
      step.started
      step.completed
      step.started
      wait.registered
      resumed
      wait.timeout
      step.completed
      step.skipped
      step.started
      succeeded
"""


async def test_a_scenario_that_cannot_run_shows_its_problems(project: ScenarioProject) -> None:
    result = await run(project, "typo", MISSING_FLOW, 0.01)
    assert result_lines(result) == [
        "ERROR typo (0.01s)",
        f"  scenarios/typo.yaml:2:7: no flow named 'deal-aproval' in {project.root / 'flows'} "
        "(did you mean 'deal-approval'?)"]


def test_an_unsent_event_is_explained() -> None:
    mismatch = Mismatch("events[0] (slack.approval)", Position("s.yaml", 7, 5),
                        note="never sent: step 'ask' never completed")
    assert mismatch_lines(mismatch) == [
        "s.yaml:7:5: events[0] (slack.approval): never sent: step 'ask' never completed"]


@pytest.mark.parametrize(("value", "shown"), [
    (None, "null"), (True, "true"), (3, "3"), ("é", '"é"'),
    ({"b": 1, "a": [1]}, '{"a": [1], "b": 1}'),
    (Missing("a.b"), "nothing ('a.b' does not exist)"),
])
def test_values_are_shown_as_json(value: object, shown: str) -> None:
    assert describe_value(value) == shown


async def test_the_summary_counts_passed_failed_and_not_run(project: ScenarioProject) -> None:
    results = [await run(project, "approved", APPROVED, 0.1),
               await run(project, "wrong", WRONG, 0.1),
               await run(project, "typo", MISSING_FLOW, 0.1)]
    assert summary(results) == "3 scenarios: 1 passed, 1 failed, 1 could not run"
    assert summary(results[:1]) == "1 scenario: 1 passed, 0 failed"


async def test_junit_xml_has_a_testcase_per_scenario(project: ScenarioProject) -> None:
    results = [await run(project, "approved", APPROVED, 0.25),
               await run(project, "wrong", WRONG, 0.5),
               await run(project, "typo", MISSING_FLOW, 0.125)]
    root = ElementTree.fromstring(junit_xml(results))
    assert root.tag == "testsuites"
    [suite] = root
    assert suite.attrib == {"name": "tarry test", "tests": "3", "failures": "1", "errors": "1",
                            "skipped": "0", "time": "0.875"}
    passed, failed, errored = suite.findall("testcase")
    assert passed.attrib == {"name": "approved-after-two-hours",
                             "classname": "scenarios.approved",
                             "file": "scenarios/approved.yaml", "time": "0.250"}
    assert list(passed) == []
    [failure] = failed
    assert (failure.tag, failure.attrib["message"]) == ("failure", "5 expectations failed")
    assert failure.text is not None
    assert failure.text.splitlines()[0] == (
        '  scenarios/wrong.yaml:6:9: exit: expected "approved", got "no-answer"')
    [error] = errored
    assert (error.tag, error.attrib["type"]) == ("error", "LoadError")
    assert error.attrib["message"].startswith("scenarios/typo.yaml:2:7: no flow named")

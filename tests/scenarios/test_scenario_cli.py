"""``tarry test``: which files it runs, what it prints, its exit codes and --junit."""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
from scenario_projects import APPROVED, ScenarioProject
from typer.testing import CliRunner, Result

from tarry.cli import app

NO_ANSWER = """\
scenario: no-answer
flow: deal-approval
inputs: { deal: { name: ACME } }
stub: { slack.post: { ts: t1 } }
expect: { exit: no-answer, calls: { slack.post: 1 } }
"""

WRONG = """\
scenario: wrong
flow: deal-approval
inputs: { deal: { name: ACME } }
stub: { slack.post: { ts: t1 } }
expect:
  status: succeeded
  exit: approved
  calls: { slack.post: 2 }
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ScenarioProject:
    """A project (the working directory) with two passing scenarios."""
    monkeypatch.chdir(tmp_path)
    project = ScenarioProject.create(tmp_path)
    project.scenario("approved", APPROVED)
    project.scenario("no-answer", NO_ANSWER)
    return project


def tarry_test(*args: str) -> Result:
    return CliRunner().invoke(app, ["test", *args])


def timeless(text: str) -> str:
    """``text`` with each scenario's duration replaced by ``(T)``."""
    return re.sub(r"\(\d+\.\d\ds\)", "(T)", text)


def test_it_runs_every_scenario_of_the_project_and_exits_0(project: ScenarioProject) -> None:
    result = tarry_test()
    assert result.exit_code == 0, result.output
    assert timeless(result.stdout) == "PASS approved-after-two-hours (T)\nPASS no-answer (T)\n"
    assert result.stderr == "2 scenarios: 2 passed, 0 failed\n"


def test_a_failing_scenario_prints_what_failed_and_exits_1(project: ScenarioProject) -> None:
    project.scenario("wrong", WRONG)
    result = tarry_test()
    assert result.exit_code == 1
    assert timeless(result.stdout) == """\
PASS approved-after-two-hours (T)
PASS no-answer (T)
FAIL wrong (T)
  scenarios/wrong.yaml:7:9: exit: expected "approved", got "no-answer"
  scenarios/wrong.yaml:8:12: calls slack.post: expected 2, got 1
"""
    assert result.stderr == "3 scenarios: 2 passed, 1 failed\n"


def test_a_scenario_that_cannot_run_exits_1(project: ScenarioProject) -> None:
    project.scenario("typo", "scenario: typo\nflow: deal-aproval\nexpect: {status: failed}\n")
    result = tarry_test("scenarios/typo.yaml")
    assert result.exit_code == 1
    assert timeless(result.stdout) == (
        "ERROR typo (T)\n"
        f"  scenarios/typo.yaml:2:7: no flow named 'deal-aproval' in {project.root / 'flows'} "
        "(did you mean 'deal-approval'?)\n")
    assert result.stderr == "1 scenario: 0 passed, 0 failed, 1 could not run\n"


def test_a_refused_scenario_file_stops_everything_before_anything_runs(
        project: ScenarioProject) -> None:
    project.scenario("bad", "scenario: bad\nflow: deal-approval\nexpect: {exits: approved}\n")
    project.scenario("worse", "scenario: worse\nexpect: {status: won}\n")
    result = tarry_test()
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (
        "scenarios/bad.yaml:3:10: unknown key 'exits' in 'expect' (did you mean 'exit'?)\n"
        "scenarios/worse.yaml:1:1: missing 'flow' at scenario level (a flow name or a path "
        "such as flows/x.yaml; without one, 'events' or 'schedules' must start runs through "
        "their triggers)\n"
        "scenarios/worse.yaml:2:18: 'status' must be one of held, pending, running, waiting, "
        "succeeded, failed, cancelled, refused, got 'won'\n")


def test_files_and_folders_may_be_named(project: ScenarioProject) -> None:
    project.write("more/nested/again.yml", APPROVED.replace("approved-after-two-hours", "again"))
    result = tarry_test("scenarios/no-answer.yaml", "more")
    assert result.exit_code == 0, result.output
    assert timeless(result.stdout) == "PASS no-answer (T)\nPASS again (T)\n"


def test_a_scenario_of_another_project_runs_against_that_project(
        project: ScenarioProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = tarry_test(str(project.root / "scenarios"))
    assert result.exit_code == 0, result.output
    assert timeless(result.stdout) == "PASS approved-after-two-hours (T)\nPASS no-answer (T)\n"


def test_a_project_folder_stands_for_its_scenarios_folder(
        project: ScenarioProject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = tarry_test(str(project.root))  # its flows and events.yaml are no scenarios
    assert result.exit_code == 0, result.output
    assert timeless(result.stdout) == "PASS approved-after-two-hours (T)\nPASS no-answer (T)\n"


def test_without_scenario_files_it_says_so_and_exits_0(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    ScenarioProject.create(tmp_path)
    result = tarry_test()
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == "no scenario files found in scenarios\n"


def test_a_missing_path_is_a_usage_error(project: ScenarioProject) -> None:
    result = tarry_test("scenarios/nope.yaml")
    assert result.exit_code == 2
    assert "'scenarios/nope.yaml' does not exist" in result.stderr


def test_junit_writes_the_results_as_xml(project: ScenarioProject) -> None:
    project.scenario("wrong", WRONG)
    result = tarry_test("--junit", "results.xml")
    assert result.exit_code == 1
    suite = ElementTree.parse(project.root / "results.xml").getroot()[0]
    assert (suite.attrib["tests"], suite.attrib["failures"], suite.attrib["errors"]) == (
        "3", "1", "0")
    assert [case.attrib["name"] for case in suite] == [
        "approved-after-two-hours", "no-answer", "wrong"]

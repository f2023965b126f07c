"""Scenario ``tasks:`` entries: a person's answer at a virtual instant after the task opened,
given as a principal and checked like any completion; a refused or never-given answer fails
the scenario with the reason; the loader's refusals. Both stores."""

from __future__ import annotations

from pathlib import Path

import pytest
from scenario_projects import ScenarioProject

from tarry.errors import LoadError
from tarry.language.model import Position
from tarry.scenarios import Mismatch, parse_scenario

REVIEW_FLOW = """\
flow: review
steps:
  - review:
      ask:
        title: Review the reply
        assign: [ops, alice]
        form: { type: object, required: [note], properties: { note: { type: string } } }
        outcomes: [accept, correct]
      timeout: 3d
      remind:
        every: 1d
        steps:
          - nudge: { chat.nudge: { to: ops } }
  - accepted:
      if: "{{ review.status == 'completed' and review.outcome == 'accept' }}"
      exit: accepted
  - corrected:
      if: "{{ review.status == 'completed' }}"
      exit: corrected
  - unanswered:
      exit: unanswered
"""

SCENARIO = """\
scenario: s
flow: review
start: "2026-03-02T09:00:00Z"
stub:
  chat.nudge: null
{tasks}
expect:
{expect}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ScenarioProject:
    monkeypatch.chdir(tmp_path)
    created = ScenarioProject.create(tmp_path)
    created.write("flows/review.yaml", REVIEW_FLOW)
    return created


async def test_an_answer_at_a_virtual_instant_resumes_the_run(project: ScenarioProject,
                                                              store_url: str) -> None:
    result = await project.run_text(SCENARIO.format(tasks="""\
tasks:
  - task: review
    after: 36h
    outcome: accept
    data: { note: fine }
    as: alice""", expect="""\
  status: succeeded
  exit: accepted
  calls: { chat.nudge: 1 }
  bindings:
    review.status: completed
    review.by: alice
    review.data.note: fine
    review.completed_at: "2026-03-03T21:00:00.000Z"
  history_contains: [reminder.sent, task.completed]"""), store_url=store_url)
    assert result.passed, result.mismatches


async def test_no_answer_runs_into_the_deadline(project: ScenarioProject,
                                                store_url: str) -> None:
    result = await project.run_text(SCENARIO.format(tasks="", expect="""\
  status: succeeded
  exit: unanswered
  calls: { chat.nudge: 2 }
  bindings: { review.status: timeout, review.by: null }"""), store_url=store_url)
    assert result.passed, result.mismatches


async def test_a_refused_answer_fails_the_scenario_with_the_reason(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text(SCENARIO.format(tasks="""\
tasks:
  - task: review
    after: 1h
    outcome: accept
    data: { note: fine }
    as: mallory""", expect="""\
  exit: unanswered"""), store_url=store_url)
    assert len(result.mismatches) == 1
    mismatch = result.mismatches[0]
    assert (mismatch.label, mismatch.pos) == ("tasks[0] (review)",
                                              Position("scenarios/s.yaml", 7, 5))
    assert mismatch.note.startswith("refused: task '")
    assert mismatch.note.endswith("' is assigned to ops, alice; 'mallory' may not complete it")


async def test_an_answer_after_the_deadline_is_refused(project: ScenarioProject,
                                                       store_url: str) -> None:
    result = await project.run_text(SCENARIO.format(tasks="""\
tasks:
  - task: review
    after: 3d
    outcome: accept
    data: { note: late }
    as: ops""", expect="""\
  exit: unanswered"""), store_url=store_url)
    assert [m.note.split(" timed out at ")[1] for m in result.mismatches] == [
        "2026-03-05T09:00:00.000Z; it can no longer be completed"]


async def test_an_answer_for_a_step_that_never_asks(project: ScenarioProject,
                                                    store_url: str) -> None:
    result = await project.run_text(SCENARIO.format(tasks="""\
tasks:
  - task: reveiw
    outcome: accept""", expect="""\
  exit: unanswered"""), store_url=store_url)
    assert result.mismatches == (Mismatch(
        "tasks[0] (reveiw)", Position("scenarios/s.yaml", 7, 5),
        note="never answered: step 'reveiw' never opened a task"),)


@pytest.mark.parametrize(("tasks", "expected"), [
    ("tasks:\n  - { after: 1h }",
     ["7:5: missing 'task' in tasks[0] (the path of the ask step)",
      "7:5: missing 'outcome' in tasks[0] (the decision, one of the task's outcomes)"]),
    ("tasks:\n  - { task: review, outcome: accept, by: ops }",
     ["7:38: unknown key 'by' in tasks[0] (expected one of: after, as, data, outcome, task)"]),
    ("tasks:\n  - { task: 'review!', outcome: accept }",
     ["7:13: 'task' must be a step path such as ask or polls[2].check, got 'review!'"]),
    ("tasks: review",
     ["6:8: 'tasks' must be a list of answers such as '- { task: review, after: 2h, "
      "outcome: accept }', got 'review'"]),
])
def test_loader_refusals(tasks: str, expected: list[str]) -> None:
    with pytest.raises(LoadError) as caught:
        parse_scenario(SCENARIO.format(tasks=tasks, expect="  exit: x"), "s.yaml")
    assert [str(p).removeprefix("s.yaml:") for p in caught.value.problems] == expected

"""tarry tasks (the inbox) and tarry tasks complete, on SQLite and on PostgreSQL: the principal
chosen with --as, every refusal with its message and exit code, and the run resuming."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .conftest import Project

REVIEW = """\
flow: review
steps:
  - review:
      ask:
        title: Review the reply
        assign: [ops, alice]
        form:
          type: object
          required: [note]
          properties: { note: { type: string } }
        outcomes: [accept, correct]
      timeout: 3d
  - decided:
      exit: "reviewed"
"""


@pytest.fixture
def tasks(project: Project, store_url: str, monkeypatch: pytest.MonkeyPatch) -> Project:
    """The project with the review flow, its store on each backend."""
    monkeypatch.setenv("TARRY_DATABASE", store_url)
    project.flow("review", REVIEW)
    return project


def open_task(project: Project) -> dict[str, Any]:
    """Start a review run (it stops at its task) and return the task document."""
    run = project.json("run", "review")
    assert run["waiting_for"]["kind"] == "task"
    listed = project.json("tasks")
    assert [doc["run"] for doc in listed] == [run["id"]]
    document: dict[str, Any] = listed[0]
    return document


def test_the_inbox_lists_open_tasks(tasks: Project) -> None:
    task = open_task(tasks)
    assert {key: task[key] for key in ("step", "title", "assign", "outcomes", "state",
                                       "reminders", "outcome", "by")} == {
        "step": "review", "title": "Review the reply", "assign": ["ops", "alice"],
        "outcomes": ["accept", "correct"], "state": "open", "reminders": 0, "outcome": None,
        "by": None}
    table = tasks.tarry("tasks")
    assert table.exit_code == 0
    assert task["id"] in table.stdout
    assert "ops, alice" in table.stdout
    assert tasks.json("tasks", "--as", "bob") == []
    assert [doc["id"] for doc in tasks.json("tasks", "--as", "alice")] == [task["id"]]


def test_completing_as_an_assignee_resumes_the_run(tasks: Project) -> None:
    task = open_task(tasks)
    result = tasks.tarry("tasks", "complete", task["id"], "--outcome", "accept",
                         "--data", '{"note": "fine"}', "--as", "alice")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (f"task {task['id']} (Review the reply): completed as accept by "
                             f"alice; run {task['run']} resumes\n")
    assert tasks.json("tasks") == []
    assert [doc["state"] for doc in tasks.json("tasks", "--all")] == ["completed"]
    assert tasks.tarry("worker", "--once").exit_code == 0
    run = tasks.json("show", task["run"])
    assert (run["status"], run["exit"]) == ("succeeded", "reviewed")
    assert run["bindings"]["review"]["by"] == "alice"
    kinds = [entry["kind"] for entry in run["history"]]
    assert "task.completed" in kinds


def test_the_principal_defaults_to_the_os_user(tasks: Project,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USER", "alice")
    monkeypatch.setenv("LOGNAME", "alice")
    task = open_task(tasks)
    done = tasks.json("tasks", "complete", task["id"], "--outcome", "correct", "--data",
                      '{"note": "x"}')
    assert (done["by"], done["outcome"], done["state"]) == ("alice", "correct", "completed")


@pytest.mark.parametrize(("args", "stderr"), [
    (["--outcome", "accept", "--data", '{"note": "x"}', "--as", "mallory"],
     "error: task {id} is assigned to ops, alice; 'mallory' may not complete it\n"),
    (["--outcome", "acept", "--data", "{}", "--as", "ops"],
     "error: task {id} does not take this answer:\n"
     "  - outcome 'acept' is not one of the task's outcomes (accept, correct) (did you mean "
     "'accept'?)\n"
     "  - data: 'note' is a required property\n"),
])
def test_a_refused_completion_exits_1_with_the_reasons(tasks: Project, args: list[str],
                                                        stderr: str) -> None:
    task = open_task(tasks)
    result = tasks.tarry("tasks", "complete", task["id"], *args)
    assert result.exit_code == 1
    assert result.stderr.replace("'" + task["id"] + "'", task["id"]) == stderr.format(
        id=task["id"])
    assert [doc["state"] for doc in tasks.json("tasks")] == ["open"]
    history = tasks.json("show", task["run"])["history"]
    assert [entry["kind"] for entry in history].count("task.refused") == 1


def test_a_task_completes_once(tasks: Project) -> None:
    task = open_task(tasks)
    first = tasks.tarry("tasks", "complete", task["id"], "--outcome", "accept", "--data",
                        '{"note": "x"}', "--as", "ops")
    assert first.exit_code == 0
    again = tasks.tarry("tasks", "complete", task["id"], "--outcome", "correct", "--data",
                        '{"note": "y"}', "--as", "alice")
    assert again.exit_code == 1
    assert again.stderr.startswith(f"error: task '{task['id']}' was already completed by ops "
                                   "at ")
    assert again.stderr.endswith("(accept); a task completes once\n")


def test_an_unknown_task_and_malformed_data(tasks: Project) -> None:
    task = open_task(tasks)
    missing = tasks.tarry("tasks", "complete", "nope", "--outcome", "accept")
    assert (missing.exit_code, missing.stderr) == (1, "error: no task with id 'nope'\n")
    malformed = tasks.tarry("tasks", "complete", task["id"], "--outcome", "accept",
                            "--data", "[1]")
    assert malformed.exit_code == 2
    assert "expected a JSON object" in malformed.stderr


def test_no_store_yet_means_no_tasks(project: Project) -> None:
    result = project.tarry("tasks", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == []
    assert result.stderr.startswith("no open tasks: ")


def test_a_unique_prefix_names_a_task_as_it_names_a_run(tasks: Project) -> None:
    task = open_task(tasks)
    done = tasks.json("tasks", "complete", task["id"][:6], "--outcome", "accept", "--data",
                      '{"note": "x"}', "--as", "ops")
    assert (done["id"], done["state"]) == (task["id"], "completed")


def test_an_ambiguous_or_unknown_prefix_is_refused_as_by_show(tasks: Project) -> None:
    for _ in range(17):  # 17 tasks, ids of 16 hex digits: two share a first character
        assert tasks.tarry("run", "review").exit_code == 0
    task_ids = sorted(doc["id"] for doc in tasks.json("tasks"))
    shared = next(task_id[0] for task_id in task_ids
                  if sum(other.startswith(task_id[0]) for other in task_ids) > 1)
    two = [task_id for task_id in task_ids if task_id.startswith(shared)][:2]
    result = tasks.tarry("tasks", "complete", shared, "--outcome", "accept", "--as", "ops")
    assert (result.exit_code, result.stderr) == (1, (
        f"error: task id prefix '{shared}' is ambiguous: tasks {two[0]}, {two[1]} and perhaps "
        "more start with it; give more of the id\n"))
    unknown = tasks.tarry("tasks", "complete", "g", "--outcome", "accept")
    assert (unknown.exit_code, unknown.stderr) == (1, "error: no task with id 'g'\n")
    assert tasks.tarry("show", "g").stderr == "error: no run with id 'g'\n"
    assert all(doc["state"] == "open" for doc in tasks.json("tasks"))

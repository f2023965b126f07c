"""tarry worker --once in-process."""

from __future__ import annotations

from .conftest import Project

INSTANT_FLOW = """\
flow: instant
steps:
  - a: { set: { x: 1 } }
"""


def test_once_handles_everything_due_and_exits(project: Project) -> None:
    project.flow("instant", INSTANT_FLOW)
    ids = [project.tarry("start", "instant").stdout.strip() for _ in range(2)]
    result = project.tarry("worker", "--once", "--concurrency", "1")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "handled 2 due runs\n"
    assert [project.json("show", run_id)["status"] for run_id in ids] == ["succeeded"] * 2


def test_once_with_nothing_due(project: Project) -> None:
    result = project.tarry("worker", "--once")
    assert (result.exit_code, result.stdout) == (0, "handled 0 due runs\n")


def test_lease_must_be_positive(project: Project) -> None:
    assert project.tarry("worker", "--once", "--lease", "0").exit_code == 2

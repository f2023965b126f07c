"""``tarry runs --waiting-for throttle`` and ``tarry show`` of a run waiting for its turn,
as an operator types them."""

from __future__ import annotations

from .conftest import Project

REPORT = """\
flow: report
inputs:
  team: { type: string, required: true }
throttle: { key: "{{ team }}", limit: 1, per: 1h }
steps:
  - sent: { log: "report for {{ team }}" }
"""


def test_a_run_waiting_for_its_turn_is_listed_and_explained(project: Project) -> None:
    project.flow("report", REPORT)
    first, second = (project.json("start", "report", "-i", "team=ops")["id"]
                     for _ in range(2))
    assert project.tarry("worker", "--once").exit_code == 0
    [listed] = project.json("runs", "--waiting-for", "throttle")
    assert listed["id"] == second
    assert (listed["status"], listed["waiting_for"]["key"]) == ("waiting", "ops")
    assert project.json("runs", "--waiting-for", "timer") == []
    assert [run["id"] for run in project.json("runs", "--status", "succeeded")] == [first]
    shown = " ".join(project.tarry("show", second).stdout.split())
    assert "waiting for its turn to start with key 'ops' (throttle: at most 1 starts per 1h)" \
        in shown

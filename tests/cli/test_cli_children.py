"""Child flows on the command line: ``tarry validate`` checks every call against the
project's flows (the called flow exists, takes those inputs), and ``tarry show`` links a
parent and its children both ways."""

from __future__ import annotations

from .conftest import Project

GREET = """\
flow: greet
inputs:
  name: { type: string, required: true }
  loud: { type: boolean, default: false }
steps:
  - hello:
      set: { text: "hello {{ name }}" }
  - done:
      exit: greeted
"""

CALLER = """\
flow: caller
steps:
  - ok:
      call: { flow: greet, inputs: { name: ada } }
  - lost:
      call: { flow: greeet }
  - unfit:
      call: { flow: greet, inputs: { nmae: ada } }
  - bare:
      call: { flow: quiet }
"""

QUIET = """\
flow: quiet
steps:
  - nothing:
      set: { done: true }
"""


def test_validate_checks_each_call_against_the_projects_flows(project: Project) -> None:
    project.flow("greet", GREET)
    project.flow("caller", CALLER)
    project.flow("quiet", QUIET)
    result = project.tarry("validate")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "flows/caller.yaml:6:21: flow 'greeet' is not in this project (did you mean "
        "'greet'?); a call starts a flow of the flows folder or of the app",
        "flows/caller.yaml:8:21: flow 'greet' has no input 'nmae' (did you mean 'name'?)",
        "flows/caller.yaml:8:21: missing input 'name' of flow 'greet' (it is required)"]


def test_validate_of_one_file_knows_the_rest_of_the_project(project: Project) -> None:
    project.flow("greet", GREET)
    path = project.root / "elsewhere.yaml"
    path.write_text("flow: one\nsteps:\n  - kid:\n      call: { flow: greet, inputs: "
                    "{ name: x, loud: true } }\n", encoding="utf-8")
    result = project.tarry("validate", "elsewhere.yaml")
    assert result.exit_code == 0, result.stdout


def test_a_call_of_a_flow_without_inputs_names_none(project: Project) -> None:
    project.flow("quiet", QUIET)
    project.flow("one", "flow: one\nsteps:\n  - kid:\n      call: { flow: quiet, "
                        "inputs: { x: 1 } }\n")
    result = project.tarry("validate")
    assert result.stdout.splitlines() == [
        "flows/one.yaml:4:21: flow 'quiet' has no input 'x' (it declares none)"]


def test_show_links_the_parent_and_its_children(project: Project) -> None:
    project.flow("greet", GREET)
    project.flow("parent", "flow: parent\nsteps:\n  - kid:\n      call: { flow: greet, "
                           "inputs: { name: ada } }\n")
    parent = project.json("run", "parent", "--follow")
    assert parent["status"] == "succeeded"
    [child] = project.json("show", parent["id"])["children"]
    assert project.json("show", child)["parent"] == parent["id"]
    shown = project.tarry("show", parent["id"]).stdout
    assert f"children {child}" in shown
    assert f"child of {parent['id']}" in project.tarry("show", child).stdout

"""tarry init, tarry validate and tarry migrate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import QUICK_FLOW, Project

BAD_FLOW = """\
flow: bad
steps:
  - a:
      wiat: { for: 2s }
  - b:
      set: { x: 1 }
      iff: "{{ true }}"
"""

MANIFEST = """\
events:
  slack.approval:
    correlate_on: [message]
"""


# --- init -------------------------------------------------------------------------------------

def test_init_writes_the_project_and_prints_each_file(project: Project) -> None:
    result = project.tarry("init", "new")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "wrote new/tarry.toml", "wrote new/flows/hello.yaml", "wrote new/events.yaml",
        "wrote new/.gitignore"]
    assert result.stderr == "next: cd new && tarry run hello --follow\n"
    assert (project.root / "new" / "flows" / "hello.yaml").is_file()


def test_init_defaults_to_the_working_directory(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = Project(tmp_path).tarry("init")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0] == "wrote tarry.toml"
    assert result.stderr == "next: tarry run hello --follow\n"


def test_init_refuses_to_overwrite(project: Project) -> None:
    result = project.tarry("init")
    assert result.exit_code == 1
    assert result.stderr == ("error: . already holds tarry.toml; tarry init never overwrites "
                             "files: move them away or choose another folder\n")


# --- validate ---------------------------------------------------------------------------------

def test_valid_flows_pass(project: Project) -> None:
    project.flow("quick", QUICK_FLOW)
    result = project.tarry("validate")
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr == "1 flow file valid\n"


def test_each_problem_is_a_line_and_the_summary_counts_them(project: Project) -> None:
    project.flow("quick", QUICK_FLOW)
    project.flow("bad", BAD_FLOW)
    result = project.tarry("validate")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "flows/bad.yaml:4:7: unknown action or key 'wiat' (did you mean 'wait'?)",
        "flows/bad.yaml:7:7: unknown action or key 'iff' (did you mean 'if'?)"]
    assert result.stderr == "2 problems in 1 of 2 flow files\n"


def test_json_lists_files_and_problems(project: Project) -> None:
    project.flow("bad", BAD_FLOW)
    result = project.tarry("validate", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "ok": False, "files": ["flows/bad.yaml"], "manifests": [], "apps": [],
        "problems": [
            {"file": "flows/bad.yaml", "line": 4, "column": 7,
             "message": "unknown action or key 'wiat' (did you mean 'wait'?)"},
            {"file": "flows/bad.yaml", "line": 7, "column": 7,
             "message": "unknown action or key 'iff' (did you mean 'if'?)"}]}


def test_given_files_and_folders_are_validated_instead_of_the_flows_folder(
        project: Project) -> None:
    project.flow("bad", BAD_FLOW)
    other = project.root / "more"
    other.mkdir()
    (other / "b.yml").write_text(QUICK_FLOW, encoding="utf-8")
    (other / "a.yaml").write_text(QUICK_FLOW.replace("quick", "a"), encoding="utf-8")
    (other / "notes.txt").write_text("not a flow", encoding="utf-8")
    document = project.json("validate", "more")
    assert document == {"ok": True, "files": ["more/a.yaml", "more/b.yml"], "manifests": [],
                        "apps": [], "problems": []}


def test_event_manifests_among_the_files_are_validated_as_manifests(project: Project) -> None:
    project.flow("quick", QUICK_FLOW)
    project.flow("events", MANIFEST)
    result = project.tarry("validate")
    assert result.exit_code == 0
    assert result.stderr == "1 flow file and 1 event manifest valid\n"
    assert project.json("validate")["manifests"] == ["flows/events.yaml"]


def test_validate_reports_each_hostile_file_and_still_checks_the_others(
        project: Project) -> None:
    project.flow("quick", QUICK_FLOW)
    project.flow("deep", "flow: deep\nsteps: " + "[" * 3000 + "]" * 3000 + "\n")
    project.flow("long", "flow: long\nsteps:\n  - a:\n      wait: { for: P99999999999W }\n")
    result = project.tarry("validate")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "flows/deep.yaml:2:71: the YAML nests deeper than 64 levels of mappings and lists",
        "flows/long.yaml:4:20: duration 'P99999999999W' is longer than 100 years (36525d), "
        "the longest tarry accepts",
    ]
    assert result.stderr == "2 problems in 2 of 3 flow files\n"


def test_a_missing_path_is_a_usage_error(project: Project) -> None:
    result = project.tarry("validate", "nowhere.yaml")
    assert result.exit_code == 2
    assert "'nowhere.yaml' does not exist" in result.stderr


def test_no_flows_folder_means_nothing_to_validate(project: Project) -> None:
    result = project.tarry("validate")
    assert result.exit_code == 0
    assert result.stderr == "no flow files to validate\n"


def test_user_actions_of_the_config_are_known_to_validation(project: Project) -> None:
    (project.root / "tarry.toml").write_text(
        '[actions]\n"note" = "json:dumps"\n', encoding="utf-8")
    project.flow("noting", "flow: noting\nsteps:\n  - a: { note: { text: hi } }\n")
    assert project.json("validate")["ok"] is True


def test_every_unimportable_action_is_reported_and_every_flow_still_checked(
        project: Project) -> None:
    (project.root / "tarry.toml").write_text(
        '[actions]\n"slack.post" = "nowhere_xyz:post"\n'
        '  note = "json:nothing_here"\nfine = "json:dumps"\nbroken = "json.dumps"\n',
        encoding="utf-8")
    project.flow("posting", "flow: posting\nsteps:\n  - a: { slack.post: { text: hi } }\n"
                            "  - b: { note: {} }\n  - c: { fine: {} }\n"
                            "  - d: { broken: {} }\n")
    project.flow("typo", "flow: typo\nsteps:\n  - a: { slack.pots: {} }\n")
    result = project.tarry("validate")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "tarry.toml:2:1: [actions] slack.post = 'nowhere_xyz:post': cannot import it (No "
        "module named 'nowhere_xyz')",
        "tarry.toml:3:3: [actions] note = 'json:nothing_here': cannot import it (module "
        "'json' has no attribute 'nothing_here')",
        'tarry.toml:5:1: [actions] broken: expected "module:attribute" such as '
        '"myproject.flows:app", got "json.dumps"',
        "flows/typo.yaml:3:10: unknown action or key 'slack.pots' (did you mean "
        "'slack.post'?)",
    ]
    assert result.stderr == "4 problems in 2 of 2 flow files and 1 project configuration\n"


def test_a_command_that_runs_flows_names_every_unimportable_action(project: Project) -> None:
    (project.root / "tarry.toml").write_text(
        '[actions]\n"slack.post" = "nowhere_xyz:post"\nnote = "json:nothing_here"\n',
        encoding="utf-8")
    project.flow("quick", QUICK_FLOW)
    result = project.tarry("run", "quick")
    assert (result.exit_code, result.stderr) == (1, (
        "error: [actions] slack.post = 'nowhere_xyz:post': cannot import it (No module named "
        "'nowhere_xyz')\n"
        "error: [actions] note = 'json:nothing_here': cannot import it (module 'json' has no "
        "attribute 'nothing_here')\n"))


def test_an_action_provided_elsewhere_passes_validation_and_fails_where_it_is_missing(
        project: Project) -> None:
    (project.root / "tarry.toml").write_text(
        'provided_actions = ["billing.charge"]\n', encoding="utf-8")
    assert "must be written inside the [tarry] table" in project.tarry("validate").stderr
    (project.root / "tarry.toml").write_text(
        '[tarry]\ndatabase = "sqlite:///state/tarry.db"\n'
        'provided_actions = ["billing.charge"]\n', encoding="utf-8")
    project.flow("charging", "flow: charging\nsteps:\n  - charge: { billing.charge: {} }\n")
    assert project.json("validate")["ok"] is True
    result = project.tarry("run", "charging", "--json")
    run = json.loads(result.stdout)
    assert (result.exit_code, run["status"], run["error"]["step"]) == (1, "failed", "charge")
    assert run["error"]["message"] == (
        "action 'billing.charge' is provided elsewhere (provided_actions in tarry.toml) and "
        "nothing provides it here: run the flow where it is provided (an installed package's "
        "'tarry.actions' entry point, or [actions]), or stub it in a test")


# --- migrate ----------------------------------------------------------------------------------

def test_migrate_applies_then_is_up_to_date(project: Project) -> None:
    first = project.tarry("migrate")
    assert first.exit_code == 0
    assert first.stdout.startswith("applied 0001_")
    second = project.tarry("migrate")
    assert second.stdout == "up to date\n"
    assert (project.root / "state" / "tarry.db").is_file()

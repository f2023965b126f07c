"""tarry runs migrate, in-process on a project's store, on both backends: the dry run's list
and the move's, the exit codes, the history entry, JSON; and ``tarry runs`` still lists."""

from __future__ import annotations

import getpass
import json

import pytest

from .conftest import WAITING_FLOW, Project

FIXED = WAITING_FLOW.replace("exit: cooled", "exit: cooled-down")
RENAMED = WAITING_FLOW.replace("cooling_off:", "cool_off:")


@pytest.fixture
def flows(project: Project, store_url: str, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("TARRY_DATABASE", store_url)
    project.flow("cooling", WAITING_FLOW)
    return project


def _waiting(flows: Project) -> str:
    return str(flows.json("run", "cooling")["id"])


def test_a_dry_run_lists_the_runs_that_would_move_and_changes_nothing(flows: Project) -> None:
    run_id = _waiting(flows)
    flows.flow("cooling", FIXED)
    result = flows.tarry("runs", "migrate", "--flow", "cooling", "--dry-run")
    assert result.exit_code == 0, result.stderr
    line, summary = result.stdout.splitlines()
    assert line == f"run {run_id} (waiting) moves"
    assert summary == "cooling: 1 run would move (dry run: nothing changed)"
    assert "migrated" not in [e["kind"] for e in flows.json("show", run_id)["history"]]


def test_yes_moves_the_runs_records_it_and_the_run_ends_on_the_new_definition(
        flows: Project) -> None:
    run_id = _waiting(flows)
    flows.flow("cooling", FIXED)
    result = flows.tarry("runs", "migrate", "--flow", "cooling", "--yes")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0] == f"run {run_id} (waiting) moved"
    [entry] = [e for e in flows.json("show", run_id)["history"] if e["kind"] == "migrated"]
    assert entry["data"]["by"] == getpass.getuser()
    assert set(entry["data"]) == {"from", "to", "by"}
    again = flows.tarry("runs", "migrate", "--flow", "cooling", "--yes")
    assert again.exit_code == 0
    assert again.stdout == "cooling: no run to move; 1 already on the new definition\n"


def test_a_run_that_cannot_move_is_listed_with_its_reason_and_exits_1(flows: Project) -> None:
    run_id = _waiting(flows)
    flows.flow("cooling", RENAMED)
    for mode in ("--dry-run", "--yes"):
        result = flows.tarry("runs", "migrate", "--flow", "cooling", mode)
        assert result.exit_code == 1, result.stderr
        assert result.stdout.splitlines()[0] == (
            f"run {run_id} (waiting) cannot move: step 'cooling_off' is not in the new "
            "definition (did you mean 'cool_off'?)")
    assert flows.json("show", run_id)["status"] == "waiting"


def test_json_prints_one_document_with_every_run_and_the_counts(flows: Project) -> None:
    run_id = _waiting(flows)
    flows.flow("cooling", RENAMED)
    result = flows.tarry("runs", "migrate", "--flow", "cooling", "--dry-run", "--json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["flow"] == "cooling"
    assert document["dry_run"] is True
    assert document["counts"] == {"moves": 0, "moved": 0, "cannot move": 1, "skipped": 0}
    [run] = document["runs"]
    assert (run["id"], run["status"], run["outcome"]) == (run_id, "waiting", "cannot move")
    assert run["reasons"] == ["step 'cooling_off' is not in the new definition (did you mean "
                              "'cool_off'?)"]


def test_to_names_a_flow_file_of_the_same_flow(flows: Project) -> None:
    run_id = _waiting(flows)
    fixed = flows.root / "cooling-fixed.yaml"
    fixed.write_text(FIXED, encoding="utf-8")
    result = flows.tarry("runs", "migrate", "--flow", "cooling", "--to", str(fixed), "--yes")
    assert result.exit_code == 0, result.stderr
    assert f"run {run_id} (waiting) moved" in result.stdout


@pytest.mark.parametrize("modes", [(), ("--dry-run", "--yes")])
def test_neither_or_both_of_dry_run_and_yes_is_a_usage_error(flows: Project,
                                                              modes: tuple[str, ...]) -> None:
    result = flows.tarry("runs", "migrate", "--flow", "cooling", *modes)
    assert result.exit_code == 2
    assert ("give --dry-run to see which runs would move, or --yes to move them"
            in result.stderr)


def test_an_unknown_flow_exits_1_naming_it(flows: Project) -> None:
    result = flows.tarry("runs", "migrate", "--flow", "coolin", "--dry-run")
    assert result.exit_code == 1
    assert "no flow named 'coolin'" in result.stderr
    assert "did you mean 'cooling'?" in result.stderr


def test_tarry_runs_still_lists_runs_with_its_filters(flows: Project) -> None:
    run_id = _waiting(flows)
    listed = flows.json("runs", "--status", "waiting", "--flow", "cooling")
    assert [doc["id"] for doc in listed] == [run_id]
    assert flows.json("runs", "--status", "failed") == []
    assert run_id in flows.tarry("runs").stdout


def test_a_new_definition_that_does_not_load_exits_1_with_its_problems(
        flows: Project) -> None:
    run_id = _waiting(flows)
    flows.flow("cooling", WAITING_FLOW.replace("wait: { for: 2d }", "wiat: { for: 2d }"))
    result = flows.tarry("runs", "migrate", "--flow", "cooling", "--yes")
    assert result.exit_code == 1
    assert result.stderr.startswith(str(flows.root / "flows" / "cooling.yaml") + ":")
    assert "wiat" in result.stderr
    assert flows.json("show", run_id)["status"] == "waiting"

"""tarry start/run --hold-after, tarry held, tarry cancel of a held run, and tarry doctor."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hold_support import script
from typer.testing import CliRunner, Result

from tarry.cli import app

FLOW = """\
flow: deploy
steps:
  - go: { log: started }
"""

SOON = (datetime.now(UTC) + timedelta(days=10)).replace(microsecond=0)
"""Ten days from now: within the 30 days a hold's 'after' may lie ahead."""
SOON_TEXT = SOON.strftime("%Y-%m-%dT%H:%M:%SZ")
SOON_SHOWN = SOON.strftime("%Y-%m-%dT%H:%M:%S.000Z")

HELD_FLOW = f"""\
flow: deploy
hold:
  - after: "{SOON_TEXT}"
steps:
  - go: {{ log: started }}
"""

CHECKED_FLOW = """\
flow: ticket
hold:
  - check: jira
steps:
  - asked: { check: { name: ci } }
"""

RUN_ID = r"[0-9a-f]{32}"


class Project:
    """A project folder (the working directory) on the test's store."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def flow(self, name: str, text: str) -> None:
        """Write ``flows/<name>.yaml``."""
        (self.root / "flows").mkdir(exist_ok=True)
        (self.root / "flows" / f"{name}.yaml").write_text(text, encoding="utf-8")

    def tarry(self, *args: str) -> Result:
        """Run the command line in-process."""
        return CliRunner().invoke(app, list(args))

    def json(self, *args: str) -> Any:
        """A ``--json`` command's document (it must succeed)."""
        result = self.tarry(*args, "--json")
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)


@pytest.fixture
def project(tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.delenv("COLUMNS", raising=False)
    (tmp_path / "tarry.toml").write_text(f"[tarry]\ndatabase = {json.dumps(store_url)}\n")
    monkeypatch.chdir(tmp_path)
    made = Project(tmp_path)
    made.flow("deploy", FLOW)
    assert made.tarry("migrate").exit_code == 0
    return made


# -- --hold-after --------------------------------------------------------------------------------


def test_start_hold_after_creates_a_held_run(project: Project) -> None:
    in_berlin = SOON.astimezone(timezone(timedelta(hours=1))).strftime("%Y-%m-%dT%H:%M:%S+01:00")

    document = project.json("start", "deploy", "--hold-after", in_berlin)

    assert document["status"] == "held"
    assert document["waiting_for"]["kind"] == "hold"
    assert document["waiting_for"]["until"] == SOON_SHOWN
    assert document["waiting_for"]["conditions"] == [{"after": SOON_SHOWN}]


def test_a_zone_less_hold_after_is_a_usage_error(project: Project) -> None:
    result = project.tarry("start", "deploy", "--hold-after", "2099-01-01T09:00:00")

    assert result.exit_code == 2
    assert ("Invalid value for '--hold-after': instant '2099-01-01T09:00:00' has no timezone; "
            "add 'Z' or an offset such as +02:00") in " ".join(result.stderr.split())


def test_a_run_refused_at_its_start_exits_one(project: Project) -> None:
    result = project.tarry("start", "deploy", "--hold-after", "2199-01-01T09:00:00Z")

    assert result.exit_code == 1
    assert re.fullmatch(RUN_ID, result.stdout.strip())
    assert result.stderr == "refused: hold-after-beyond-max\n"


def test_run_of_a_held_run_says_it_is_held_and_saved(project: Project) -> None:
    result = project.tarry("run", "deploy", "--hold-after", SOON_TEXT)

    assert result.exit_code == 0, result.stderr
    summary, explanation = result.stdout.splitlines()
    assert re.fullmatch(rf"run {RUN_ID} \(deploy\): held", summary)
    assert explanation.startswith("held before its first step since ")
    assert explanation.endswith(f" until {SOON_SHOWN}; then checks its hold again")
    assert result.stderr == ("the run is saved; a worker (tarry worker) resumes it when it is "
                             "due\n")


# -- held and cancel ---------------------------------------------------------------------------


def test_held_shows_three_rows_and_how_many_more(project: Project) -> None:
    project.flow("deploy", HELD_FLOW)
    for number in range(5):
        assert project.tarry("start", "deploy", "--target", f"acme/web#{number}").exit_code == 0

    result = project.tarry("held")

    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["target", "flow", "conditions", "held", "for", "next", "check"]
    rows = [line for line in lines if line.strip().startswith("acme/web#")]
    assert len(rows) == 3
    assert rows[0].split()[1:4] == ["deploy", "after", SOON_SHOWN]
    assert rows[0].split()[-1] == SOON_SHOWN
    assert lines[-1] == "and 2 more (tarry held --all)"


def test_held_all_shows_every_row(project: Project) -> None:
    project.flow("deploy", HELD_FLOW)
    for number in range(5):
        project.tarry("start", "deploy", "--target", f"acme/web#{number}")

    result = project.tarry("held", "--all")

    assert len([line for line in result.stdout.splitlines() if "acme/web#" in line]) == 5
    assert "more" not in result.stdout


def test_held_json_lists_every_held_run(project: Project) -> None:
    project.flow("deploy", HELD_FLOW)
    ids = [project.tarry("start", "deploy", "--target", f"acme/web#{n}").stdout.strip()
           for n in range(4)]

    rows = project.json("held")

    assert sorted(row["id"] for row in rows) == sorted(ids)
    row = rows[0]
    assert set(row) == {"id", "flow", "target", "conditions", "held_since", "held_for",
                        "next_check"}
    assert (row["flow"], row["conditions"], row["next_check"]) == (
        "deploy", f"after {SOON_SHOWN}", SOON_SHOWN)


def test_held_without_held_runs_says_so(project: Project) -> None:
    result = project.tarry("held")

    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "no held runs\n")


def test_cancel_ends_a_held_run_at_once(project: Project) -> None:
    project.flow("deploy", HELD_FLOW)
    run_id = project.tarry("start", "deploy").stdout.strip()

    result = project.tarry("cancel", run_id)

    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"run {run_id} (deploy): cancelled\n"
    assert project.json("show", run_id)["status"] == "cancelled"
    assert project.tarry("held").stderr == "no held runs\n"


# -- doctor ----------------------------------------------------------------------------------


@pytest.fixture
def checked(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """The project with a flow naming two checks, both declared and executable."""
    project.flow("ticket", CHECKED_FLOW)
    jira = script(tmp_path / "checks", "jira.sh", "exit 0")
    ci = script(tmp_path / "checks", "ci.sh", "exit 0")
    monkeypatch.setenv("TARRY_CHECKS", f"jira:{jira},ci:{ci}")
    return project


def lines_of(result: Result, level: str) -> list[str]:
    """The finding lines of one level."""
    return [line for line in result.stdout.splitlines() if line.startswith(f"{level}: ")]


def test_doctor_passes_a_sound_deployment(checked: Project, tmp_path: Path) -> None:
    result = checked.tarry("doctor")

    assert result.exit_code == 0, result.stdout
    assert lines_of(result, "error") == lines_of(result, "warning") == []
    assert f"ok: check 'jira': {tmp_path}/checks/jira.sh is executable" in result.stdout
    assert "ok: 2 flow file(s) and the event manifests validate" in result.stdout
    assert result.stderr == "0 error(s), 0 warning(s)\n"


def test_doctor_reports_a_garbled_checks_variable(project: Project,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TARRY_CHECKS", "jira")

    result = project.tarry("doctor")

    assert result.exit_code == 1
    assert result.stdout == ('error: TARRY_CHECKS: entry "jira" is not '
                             "name:/absolute/path\n")


@pytest.mark.parametrize(("damage", "problem"), [
    ("remove", "does not exist"),
    ("directory", "is not a file"),
    ("not executable", "is not executable (chmod +x it)"),
])
def test_doctor_reports_a_check_path_that_cannot_run(checked: Project, tmp_path: Path,
                                                     damage: str, problem: str) -> None:
    path = tmp_path / "checks" / "jira.sh"
    path.unlink()
    if damage == "directory":
        path.mkdir()
    elif damage == "not executable":
        path.write_text("#!/bin/sh\nexit 0\n")

    result = checked.tarry("doctor")

    assert result.exit_code == 1
    assert lines_of(result, "error") == [f"error: check 'jira': {path} {problem}"]


def test_doctor_reports_an_undeclared_check_and_warns_of_an_unused_one(
        checked: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spare = script(tmp_path / "checks", "spare.sh", "exit 0")
    monkeypatch.setenv("TARRY_CHECKS", f"jira:{tmp_path}/checks/jira.sh,spare:{spare}")

    result = checked.tarry("doctor")

    assert result.exit_code == 1
    assert lines_of(result, "error") == [
        "error: flows/ticket.yaml:5:5: check 'ci' is not declared; its runs would be refused "
        "check-unknown (declare it in [checks] or TARRY_CHECKS)"]
    assert lines_of(result, "warning") == [
        "warning: check 'spare' is declared but no flow names it"]


def test_doctor_only_warns_of_an_unused_check(checked: Project, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    spare = script(tmp_path / "checks", "spare.sh", "exit 0")
    jira, ci = tmp_path / "checks" / "jira.sh", tmp_path / "checks" / "ci.sh"
    monkeypatch.setenv("TARRY_CHECKS", f"jira:{jira},ci:{ci},spare:{spare}")

    result = checked.tarry("doctor")

    assert result.exit_code == 0
    assert result.stderr == "0 error(s), 1 warning(s)\n"


def test_doctor_reports_an_after_beyond_the_maximum(project: Project) -> None:
    project.flow("deploy", HELD_FLOW.replace(SOON_TEXT, "2199-01-01T09:00:00Z"))

    result = project.tarry("doctor")

    assert result.exit_code == 1
    assert lines_of(result, "error") == [
        "error: flows/deploy.yaml:3:5: 'after' 2199-01-01T09:00:00.000Z lies more than 4w2d "
        "ahead; its runs would be refused hold-after-beyond-max"]


def test_doctor_reports_a_flow_that_does_not_load(project: Project) -> None:
    project.flow("deploy", "flow: deploy\nsteps:\n  - go: { lgo: x }\n")

    result = project.tarry("doctor")

    assert result.exit_code == 1
    assert lines_of(result, "error") == [
        "error: flows/deploy.yaml:3:11: unknown action or key 'lgo' (did you mean 'log'?)"]


def test_doctor_reports_a_store_behind_this_version(tmp_path: Path, project: Project) -> None:
    database = tmp_path / "behind.db"
    (tmp_path / "tarry.toml").write_text(f'[tarry]\ndatabase = "sqlite:///{database}"\n')
    assert project.tarry("migrate").exit_code == 0
    with sqlite3.connect(database) as connection:
        connection.execute("DELETE FROM schema_migrations WHERE version = 3")

    result = project.tarry("doctor")

    assert result.exit_code == 1
    assert lines_of(result, "error") == [
        f"error: the store (SQLite {database}) is not migrated: 0003_holds pending; "
        "run `tarry migrate`"]


def test_doctor_only_warns_of_an_empty_store(tmp_path: Path, project: Project) -> None:
    database = tmp_path / "empty.db"
    sqlite3.connect(database).close()
    (tmp_path / "tarry.toml").write_text(f'[tarry]\ndatabase = "sqlite:///{database}"\n')

    result = project.tarry("doctor")

    assert result.exit_code == 0
    assert lines_of(result, "warning") == [
        f"warning: the store (SQLite {database}) is reachable but empty: the first command to "
        "use it creates the schema (or run `tarry migrate`)"]


def test_doctor_json_counts_and_lists_the_findings(checked: Project) -> None:
    document = checked.json("doctor")

    assert (document["ok"], document["errors"], document["warnings"]) == (True, 0, 0)
    assert {"level": "ok", "topic": "config", "message": document["findings"][0]["message"]} \
        == document["findings"][0]
    assert [f["topic"] for f in document["findings"]][-1] == "store"


# -- a hold agrees with itself -----------------------------------------------------------------

JIRA_FLOW = """\
flow: ticket
hold:
  - check: jira
steps:
  - go: { log: started }
"""


def with_jira(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              body: str) -> None:
    """Declare the check ``jira`` as a script of ``body`` and write a flow held on it."""
    jira = script(tmp_path / "checks", "jira.sh", body)
    monkeypatch.setenv("TARRY_CHECKS", f"jira:{jira}")
    project.flow("ticket", JIRA_FLOW)


def test_held_and_show_give_the_same_held_since(project: Project, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    with_jira(project, tmp_path, monkeypatch, "exit 3")
    run_id = project.json("run", "ticket")["id"]
    shown = project.json("show", run_id)["waiting_for"]
    [row] = project.json("held")
    assert row["held_since"] == shown["since"]
    assert shown["explanation"].startswith(f"held before its first step since {shown['since']}")


def test_a_passed_after_is_no_longer_listed_as_a_condition(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with_jira(project, tmp_path, monkeypatch, "exit 3")
    past = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    project.json("run", "ticket", "--hold-after", past)
    [row] = project.json("held")
    assert row["conditions"] == "jira"


def test_the_check_log_line_names_the_run(project: Project, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          caplog: pytest.LogCaptureFixture) -> None:
    with_jira(project, tmp_path, monkeypatch, "exit 3")
    with caplog.at_level(logging.INFO, logger="tarry.holds"):
        run_id = project.json("run", "ticket")["id"]
    assert re.fullmatch(rf"check jira for run {run_id}: not_yet \(exit 3\) in \d+ ms; "
                        r"stdout 0 bytes, stderr 0 bytes",
                        next(r.getMessage() for r in caplog.records if "check jira" in
                             r.getMessage()))


def test_started_is_stamped_after_the_hold_cleared(project: Project, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with_jira(project, tmp_path, monkeypatch, "sleep 0.2; exit 0")
    history = project.json("run", "ticket")["history"]
    kinds = [entry["kind"] for entry in history]
    assert kinds[:4] == ["created", "hold.check", "hold.cleared", "started"]
    instants = [entry["at"] for entry in history]
    assert instants == sorted(instants)


def test_show_counts_the_faults_towards_hold_unanswerable(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with_jira(project, tmp_path, monkeypatch, "exit 1")
    run_id = project.json("run", "ticket")["id"]
    explanation = project.tarry("show", run_id).stdout.splitlines()[1]
    assert explanation.endswith("; then checks its hold again; check jira could not tell 1 "
                                "time in a row (5 refuse the run hold-unanswerable)")


def test_an_after_over_inputs_points_to_hold_after(project: Project) -> None:
    project.flow("later", "flow: later\ninputs:\n  at: { type: instant }\nhold:\n"
                          "  - after: \"{{ at }}\"\nsteps:\n  - go: { log: started }\n")
    result = project.tarry("validate", "flows/later.yaml")
    assert result.stdout == (
        "flows/later.yaml:5:12: a hold's 'after' is a literal instant (the gate is decided "
        "before the first step, and a flow's hold is the same for every run); to hold one run "
        "until an instant it is given, start it with --hold-after INSTANT (tarry start, tarry "
        "run) or hold_after (POST /v1/runs)\n")

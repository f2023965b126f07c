"""What a new user meets in the first hour, through the real ``tarry`` executable: help without
Python types, ``--version``, plain usage errors, run id prefixes, ``cancel --json``, a listing
that says how many runs it left out, and commands outside a project that create nothing and
say where they looked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from tarry.config import load_settings
from tarry.engine.runtime import Engine

TARRY = Path(sys.executable).parent / "tarry"

pytestmark = pytest.mark.timeout(240)  # several processes each, on a machine that may be busy

FLOW = """\
flow: cooling
steps:
  - cooling_off:
      wait: { for: 2d }
"""


def tarry(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``tarry ARGS`` in ``root``, with this process's (scrubbed) environment."""
    env = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    return subprocess.run([str(TARRY), *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=30, check=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with a tarry.toml and one waiting flow."""
    (tmp_path / "tarry.toml").write_text("", encoding="utf-8")
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "cooling.yaml").write_text(FLOW, encoding="utf-8")
    return tmp_path


def start_runs(root: Path, count: int) -> list[str]:
    """Start ``count`` runs of ``cooling`` in-process (quicker than as many processes)."""
    engine = Engine.from_settings(load_settings(cwd=root, env={}))
    try:
        return [engine.start("cooling").id for _ in range(count)]
    finally:
        engine.close()


# --- help, version, usage errors --------------------------------------------------------------

def test_help_names_arguments_by_metavar_without_python_types(tmp_path: Path) -> None:
    run_help = tarry(tmp_path, "run", "--help").stdout
    validate_help = tarry(tmp_path, "validate", "--help").stdout
    assert run_help.startswith("Usage: tarry run [OPTIONS] FLOW\n")
    assert "\n  FLOW  A flow name" in run_help
    assert validate_help.startswith("Usage: tarry validate [OPTIONS] [PATH...]\n")
    assert "\n  PATH...  Flow files, manifests or folders" in validate_help
    for text in (run_help, validate_help):
        assert "<str>" not in text
        assert "list[Path]" not in text
        assert "{" not in text.splitlines()[0]


def test_the_command_list_gives_each_command_its_whole_first_sentence(tmp_path: Path) -> None:
    listing = tarry(tmp_path, "--help").stdout
    commands = listing[listing.index("Commands:"):]
    assert "..." not in commands
    assert "…" not in commands
    assert ("  init      Scaffold a project: tarry.toml, flows/, events.yaml and an example\n"
            "            flow.\n") in commands


def test_version_prints_the_installed_version(tmp_path: Path) -> None:
    result = tarry(tmp_path, "--version")
    assert (result.returncode, result.stdout) == (0, f"tarry {version('tarry')}\n")


def test_an_unknown_state_is_a_plain_usage_error(tmp_path: Path) -> None:
    result = tarry(tmp_path, "events", "--state", "bogus")
    assert result.returncode == 2
    assert result.stderr.endswith(
        "Error: Invalid value for '--state': 'bogus' is not an event state; use one of: "
        "delivered, buffered, unmatched, invalid, duplicate, discarded\n")
    assert "Value error" not in result.stderr


# --- run ids, cancel --json, listing limits ---------------------------------------------------

def test_a_unique_prefix_names_a_run_and_an_ambiguous_one_is_refused(project: Path) -> None:
    run_ids = start_runs(project, 17)  # 17 ids, 16 hex digits: two share a first character
    first = sorted(run_ids)[0]
    assert tarry(project, "show", first[:12], "--json").stdout.count(first) >= 1
    shared = next(run_id[0] for run_id in sorted(run_ids)
                  if sum(other.startswith(run_id[0]) for other in run_ids) > 1)
    two = sorted(r for r in run_ids if r.startswith(shared))[:2]
    result = tarry(project, "show", shared)
    assert result.returncode == 1
    assert result.stderr == (f"error: run id prefix '{shared}' is ambiguous: runs "
                             f"{two[0]}, {two[1]} and perhaps more start with it; give more "
                             "of the id\n")
    result = tarry(project, "cancel", "--json", first[:12])
    document = json.loads(result.stdout)
    assert (result.returncode, document["id"], document["status"]) == (0, first, "cancelled")
    assert document["history"][-1]["kind"] == "cancelled"


def test_runs_shows_the_newest_fifty_and_says_how_many_it_left_out(project: Path) -> None:
    start_runs(project, 51)
    note = "50 of 51 runs shown; --limit N shows more\n"
    result = tarry(project, "runs")
    assert result.returncode == 0
    assert len(result.stdout.splitlines()) == 2 + 50  # the header, its rule, fifty runs
    assert result.stderr == note
    result = tarry(project, "runs", "--json")  # a list still (SPEC 8.1), the note aside
    assert len(json.loads(result.stdout)) == 50
    assert result.stderr == note
    assert tarry(project, "runs", "--limit", "2").stderr == note.replace("50", "2")
    assert tarry(project, "runs", "--limit", "51").stderr == ""


# --- outside a project ------------------------------------------------------------------------

def test_reading_commands_outside_a_project_create_nothing_and_say_where_they_looked(
        tmp_path: Path) -> None:
    store = tmp_path / ".tarry" / "tarry.db"
    where = (f"no store at {store} yet (no tarry.toml found in {tmp_path} or any folder above "
             "it, so the defaults apply); a command that starts a run or sends an event "
             "creates it")
    for args, said in ((["runs"], f"no runs: {where}\n"),
                       (["held"], f"no held runs: {where}\n"),
                       (["events"], f"no events: {where}\n"),
                       (["show", "abc"], f"error: {where}\n")):
        result = tarry(tmp_path, *args)
        assert result.stderr == said, args
        assert result.returncode == (1 if args[0] == "show" else 0)
    assert tarry(tmp_path, "runs", "--json").stdout == "[]\n"
    assert "does not exist yet" in tarry(tmp_path, "doctor").stdout
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_flow_outside_a_project_creates_nothing_and_says_where_it_looked(
        tmp_path: Path) -> None:
    where = f"(no tarry.toml found in {tmp_path} or any folder above it, so the defaults apply)"
    for command, flow, said in (
            ("run", "hello", f"no flow named 'hello' in {tmp_path / 'flows'}"),
            ("start", "hello", f"no flow named 'hello' in {tmp_path / 'flows'}"),
            ("run", "hello.yaml", "no flow file at hello.yaml")):
        result = tarry(tmp_path, command, flow)
        assert (result.returncode, result.stderr) == (1, f"error: {said} {where}\n"), command
    assert list(tmp_path.iterdir()) == []


def test_doctor_outside_a_project_says_no_tarry_toml_was_found_and_where_it_looked(
        tmp_path: Path) -> None:
    result = tarry(tmp_path, "doctor")
    assert result.stdout.splitlines()[0] == (
        f"ok: the configuration parses (no tarry.toml found in {tmp_path} or any folder above "
        "it, so the defaults apply)")


def test_doctor_in_a_project_names_its_tarry_toml(project: Path) -> None:
    result = tarry(project, "doctor")
    assert result.stdout.splitlines()[0] == (
        f"ok: the configuration parses (the project of {project / 'tarry.toml'})")


# --- inputs -----------------------------------------------------------------------------------

RELEASE_FLOW = """\
flow: release
timezone: Europe/Berlin
inputs:
  version: { type: string, required: true }
  at: { type: instant, required: true }
steps:
  - go:
      wait: { until: "{{ at }}" }
"""


def test_inputs_are_refused_before_the_run_exists_with_the_fix_in_the_message(
        project: Path) -> None:
    (project / "flows" / "release.yaml").write_text(RELEASE_FLOW, encoding="utf-8")
    result = tarry(project, "start", "release", "-i", "version=1.0", "-i", "at=2026-09-01")
    assert result.returncode == 1
    assert result.stderr == (
        "error: input 'version' must be a string, got 1.0 (-i reads 1.0 as JSON; for the text, "
        "quote it: -i 'version=\"1.0\"', or --inputs '{\"version\": \"1.0\"}'); input 'at' "
        "must be an instant, a date with a time such as 2026-09-01T09:00:00Z, got the date "
        "'2026-09-01' only\n")
    assert tarry(project, "runs").stderr == "no runs\n"
    quoted = tarry(project, "start", "release", "-i", 'version="1.0"',
                   "-i", "at=2026-09-01T09:00:00")
    assert quoted.returncode == 0, quoted.stderr

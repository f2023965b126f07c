"""The getting-started guide shows only what works: its commands, flows, outputs, code and
configuration are run here as printed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from markdown_blocks import (
    ROOT,
    TARRY,
    Document,
    example_copy,
    run_console,
    run_status,
    shell,
)
from tarry.cli import app
from tarry.config import load_settings

GUIDE = Document("docs/getting-started.md", __file__)
INIT = GUIDE.block("sh", after="## A first flow")
HELLO_FLOW = GUIDE.block("yaml", after="This is `examples/waiting/flows/hello.yaml`")
REMINDER = GUIDE.block("yaml", after="Given this `flows/reminder.yaml`")
VALIDATE = GUIDE.block("console", after="Given this `flows/reminder.yaml`")
RUN_HELLO = GUIDE.block("console", after="## `tarry run`")
RUN_WAITING = GUIDE.block("console", after="Without `--follow`, the command returns")
WORKER = GUIDE.block("sh", after="## `tarry worker` and `tarry start`")
LISTING = GUIDE.block("sh", after="## `tarry show`, `tarry runs`, `tarry cancel`")
POLLING = GUIDE.block("yaml", after="## Waiting and polling")
HARNESS_TEST = GUIDE.block("python", after="## Testing flows on a virtual clock")
TARRY_TEST = GUIDE.block("console", after="`tarry test` runs every scenario")
CONFIG = GUIDE.block("toml", after="## Configuration")
EXAMPLES = ROOT / "examples"

pytestmark = pytest.mark.timeout(240)  # processes, on a machine that may be busy


# --- a first flow -----------------------------------------------------------------------------

def test_init_scaffolds_what_the_guide_says(tmp_path: Path) -> None:
    (tmp_path / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    result = shell(INIT, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    project = tmp_path / "myproject"
    assert (project / "tarry.toml").read_text(encoding="utf-8").startswith("#")
    assert list((project / "flows").glob("*.yaml"))
    assert (project / "events.yaml").is_file()
    assert ".tarry/" in (project / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_the_first_flow_is_the_hello_example_without_its_comments() -> None:
    lines = (EXAMPLES / "waiting" / "flows" / "hello.yaml").read_text(
        encoding="utf-8").splitlines(keepends=True)
    assert "".join(line for line in lines if not line.startswith("#")) == HELLO_FLOW


def test_the_validate_output_is_what_tarry_validate_prints(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "reminder.yaml").write_text(REMINDER, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["validate"])
    shown = VALIDATE.splitlines()
    assert result.exit_code == 1
    assert shown[0] == "$ tarry validate"
    assert result.stdout.splitlines() == shown[1:-1]
    assert result.stderr.splitlines() == shown[-1:]


# --- tarry run, start, worker, runs, show, cancel ---------------------------------------------

@pytest.mark.slow
def test_tarry_run_follows_hello_as_the_guide_shows(tmp_path: Path) -> None:
    run_console(RUN_HELLO, example_copy("waiting", tmp_path))


def test_tarry_run_returns_when_the_run_waits(tmp_path: Path) -> None:
    run_console(RUN_WAITING, example_copy("waiting", tmp_path))


@pytest.mark.slow
def test_start_then_a_worker_runs_hello_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    folder = example_copy("waiting", tmp_path)
    start, worker, once = WORKER.splitlines()
    started = shell(start, folder)
    assert started.returncode == 0, started.stderr
    run_id = started.stdout.strip()
    env = {**os.environ, "PATH": f"{TARRY.parent}{os.pathsep}{os.environ['PATH']}"}
    process = subprocess.Popen(["bash", "-c", f"exec {worker}"], cwd=folder, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while run_status(folder, run_id) != "succeeded" and time.monotonic() < deadline:
            time.sleep(0.2)  # the run waits three seconds of real time: the worker's own clock
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 0, process.communicate()
    finally:
        process.kill()
        process.communicate()
    assert run_status(folder, run_id) == "succeeded"
    assert shell(once, folder).returncode == 0


def test_runs_show_and_cancel_act_on_a_waiting_run(tmp_path: Path) -> None:
    folder = example_copy("waiting", tmp_path)
    started = shell("tarry start account-deletion -i account=acct_42 -i email=ada@example.com"
                    " && tarry worker --once", folder)
    assert started.returncode == 0, started.stderr
    run_id = started.stdout.splitlines()[0]
    listed, filtered, shown, cancelled = (
        shell(line.replace("RUN", run_id), folder) for line in LISTING.splitlines())
    for result in (listed, filtered):
        assert result.returncode == 0, result.stderr
        assert run_id in result.stdout, result.stdout
        assert "account-deletion" in result.stdout
    assert shown.stdout.count("waiting for timer at step 'cooling_off'") == 1
    assert cancelled.returncode == 0, cancelled.stderr
    assert run_status(folder, run_id) == "cancelled"


# --- waiting and polling, testing, configuration ----------------------------------------------

def test_the_polling_snippet_is_taken_from_the_example() -> None:
    assert POLLING in (EXAMPLES / "waiting" / "flows" / "reindex-ticket.yaml").read_text(
        encoding="utf-8")


def test_the_harness_example_passes_under_pytest_as_printed(tmp_path: Path) -> None:
    (tmp_path / "test_cooling.py").write_text(HARNESS_TEST, encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "test_cooling.py"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_tarry_test_passes_every_scenario_of_the_waiting_example(tmp_path: Path) -> None:
    example_copy("waiting", tmp_path)
    command = TARRY_TEST.removeprefix("$ ").strip()
    assert command == "cd examples/waiting && ../../.venv/bin/tarry test"
    result = shell(command, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    scenarios = sorted((EXAMPLES / "waiting" / "scenarios").glob("*.yaml"))
    assert [line.split()[0] for line in result.stdout.splitlines()] == ["PASS"] * len(scenarios)


def test_the_configuration_shown_runs_the_waiting_example(tmp_path: Path) -> None:
    folder = example_copy("waiting", tmp_path)
    (folder / "tarry.toml").write_text(CONFIG, encoding="utf-8")
    settings = load_settings(folder, env={})
    assert (settings.sqlite_path, settings.flows_dir) == (folder / ".tarry" / "tarry.db",
                                                          folder / "flows")
    assert dict(settings.actions) == {"search.status": "search_index:status"}
    result = subprocess.run([str(TARRY), "validate"], cwd=folder, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr

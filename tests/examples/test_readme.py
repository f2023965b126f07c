"""The README shows only what works: its commands, flows, outputs and code are checked here."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from markdown_blocks import ROOT, block_after, console_commands, shown_line
from typer.testing import CliRunner

from tarry.cli import app
from tarry.testing import Harness

README = (ROOT / "README.md").read_text(encoding="utf-8")
HELLO = ROOT / "examples" / "waiting" / "flows" / "hello.yaml"
TOUR = ROOT / "examples" / "tour"
TARRY = Path(sys.executable).parent / "tarry"


def run_console_block(block: str, folder: Path) -> None:
    """Run each ``$ tarry …`` command of ``block`` in ``folder`` (a copy of an example) and
    check that it prints the lines shown after it (``…``, instants and ids stand for any)."""
    env = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    for command, shown in console_commands(block):
        assert command.startswith("tarry "), command
        result = subprocess.run(f"{TARRY} {command.removeprefix('tarry ')}", shell=True,
                                cwd=folder, env=env, capture_output=True, text=True,
                                timeout=60, check=False)
        printed = result.stdout.splitlines()
        assert len(printed) == len(shown), (command, result.stdout, result.stderr)
        for line, expected in zip(printed, shown, strict=True):
            assert shown_line(expected).fullmatch(line), (command, line, expected)


def example_copy(name: str, tmp_path: Path) -> Path:
    """A fresh copy of ``examples/<name>`` (without any store a developer left in it)."""
    folder = tmp_path / name
    shutil.copytree(ROOT / "examples" / name, folder,
                    ignore=shutil.ignore_patterns(".tarry", "__pycache__"))
    return folder


def test_the_readme_opens_with_the_two_commands() -> None:
    assert README.splitlines()[:4] == [
        "```sh",
        "python3 -m venv .venv && .venv/bin/pip install -q -e . && "
        "(cd examples/waiting && ../../.venv/bin/tarry run hello --follow)",
        "python3 -m venv .venv && .venv/bin/pip install -q -e '.[dev]' && scripts/test",
        "```",
    ]


def test_the_first_flow_is_the_hello_example_without_its_comments() -> None:
    lines = HELLO.read_text(encoding="utf-8").splitlines(keepends=True)
    assert block_after(README, "This is `examples/waiting/flows/hello.yaml`", "yaml") == "".join(
        line for line in lines if not line.startswith("#"))


def test_the_polling_snippet_is_taken_from_the_example() -> None:
    snippet = block_after(README, "### Waiting and polling", "yaml")
    example = (ROOT / "examples" / "waiting" / "flows" / "reindex-ticket.yaml").read_text(
        encoding="utf-8")
    assert snippet in example


def test_the_validate_output_is_what_tarry_validate_prints(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    flow = block_after(README, "Given this `flows/reminder.yaml`", "yaml")
    shown = block_after(README, "Given this `flows/reminder.yaml`", "console").splitlines()
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "reminder.yaml").write_text(flow, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["validate"])
    assert result.exit_code == 1
    assert shown[0] == "$ tarry validate"
    assert result.stdout.splitlines() == shown[1:-1]
    assert result.stderr.splitlines() == shown[-1:]


@pytest.mark.timeout(240)  # processes, on a machine that may be busy
def test_the_harness_example_passes_under_pytest_as_printed(tmp_path: Path) -> None:
    code = block_after(README, "### Testing flows on a virtual clock", "python")
    (tmp_path / "test_cooling.py").write_text(code, encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "test_cooling.py"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


@pytest.mark.slow
@pytest.mark.timeout(240)  # processes, on a machine that may be busy
def test_the_first_command_runs_hello_as_the_tour_shows(tmp_path: Path) -> None:
    block = block_after(README, "### `tarry run`", "console")
    run_console_block(block, example_copy("waiting", tmp_path))


def test_the_tour_files_are_the_example_files_as_printed() -> None:
    assert block_after(README, "this is `examples/tour/events.yaml`", "yaml") == (
        TOUR / "events.yaml").read_text(encoding="utf-8")
    assert block_after(README, "`examples/tour/flows/approval.yaml` waits", "yaml") == (
        TOUR / "flows" / "approval.yaml").read_text(encoding="utf-8")
    assert block_after(README, "This is\n`examples/tour/orders.py`", "python") == (
        TOUR / "orders.py").read_text(encoding="utf-8")


@pytest.mark.timeout(240)  # processes, on a machine that may be busy
def test_the_tour_commands_print_what_the_readme_shows(tmp_path: Path) -> None:
    folder = example_copy("tour", tmp_path)
    run_console_block(block_after(README, "`examples/tour/flows/approval.yaml` waits",
                                  "console"), folder)
    run_console_block(block_after(README, "### Flows in Python", "console"), folder)
    result = subprocess.run([str(TARRY), "validate"], cwd=folder, capture_output=True,
                            text=True, timeout=60, check=False)
    assert (result.returncode, result.stderr) == (
        0, "1 flow file, 1 event manifest and 1 app of Python flows valid\n")


async def test_the_event_and_python_flows_do_what_the_tour_says(tmp_path: Path) -> None:
    manifests = block_after(README, "this is `examples/tour/events.yaml`", "yaml")
    code = block_after(README, "### Flows in Python", "python")
    namespace: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    harness = Harness(tmp_path, app=namespace["app"], manifests=manifests)
    approval = harness.start(harness.flow(block_after(
        README, "`examples/tour/flows/approval.yaml` waits", "yaml")), {"ticket": "T-7"})
    order = harness.start("settle-order", {"order_id": "A1"})
    await harness.advance(timedelta(days=2, hours=1))
    assert harness.record(approval).exit == "escalated"
    harness.send("order.approval", {"order": "A1"})
    await harness.run_due()
    assert harness.document(order)["result"] == "approved"
    harness.close()

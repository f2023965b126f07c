"""The README shows only what works: its commands, flows, outputs and code are run here as
printed, and it stays short."""

from __future__ import annotations

import os
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from markdown_blocks import ROOT, TARRY, Document, example_copy, run_console, shell
from tarry.testing import Harness

README = Document("README.md", __file__)
INSTALL = README.block("sh")
HELLO_FLOW = README.block("yaml", after="This is\n`examples/waiting/flows/hello.yaml`")
RUN_WAITING = README.block("console", after="A run suspends at a wait")
APPROVAL = README.block("yaml", after="`flows/approval.yaml` waits")
SEND = README.block("console", after="`flows/approval.yaml` waits")
ORDERS = README.block("python", after="This is\n`examples/tour/orders.py`")
RUN_ORDER = README.block("console", after="**Python.**")
EXAMPLES = ROOT / "examples"
README_LIMIT = 12_000
"""Characters: what tarry is, how to start, where it stands, and links to everything else."""

pytestmark = pytest.mark.timeout(240)  # processes, on a machine that may be busy


def test_the_readme_stays_short() -> None:
    assert len(README.text) < README_LIMIT


# --- the two install commands -----------------------------------------------------------------

def test_the_readme_opens_with_the_two_commands() -> None:
    assert INSTALL.splitlines() == [
        "python3 -m venv .venv && .venv/bin/pip install -q -e . && "
        "(cd examples/waiting && ../../.venv/bin/tarry run hello --follow)",
        "python3 -m venv .venv && .venv/bin/pip install -q -e '.[dev]' && scripts/test",
    ]
    assert README.text.splitlines()[:4] == ["```sh", *INSTALL.splitlines(), "```"]
    assert os.access(ROOT / "scripts" / "test", os.X_OK)


@pytest.mark.slow
def test_the_first_command_runs_the_hello_flow_as_printed(tmp_path: Path) -> None:
    """What the first command does once tarry is installed: its last part, as printed, in a
    checkout whose ``.venv`` is the test environment."""
    example_copy("waiting", tmp_path)
    after_install = INSTALL.splitlines()[0].split(" && ", 2)[2]
    assert after_install == "(cd examples/waiting && ../../.venv/bin/tarry run hello --follow)"
    result = shell(after_install, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].endswith("(hello): succeeded with exit 'greeted'")


# --- the tour ---------------------------------------------------------------------------------

def test_the_first_flow_is_the_hello_example_without_its_comments() -> None:
    lines = (EXAMPLES / "waiting" / "flows" / "hello.yaml").read_text(
        encoding="utf-8").splitlines(keepends=True)
    assert "".join(line for line in lines if not line.startswith("#")) == HELLO_FLOW


def test_tarry_run_returns_when_the_run_waits(tmp_path: Path) -> None:
    run_console(RUN_WAITING, example_copy("waiting", tmp_path))


def test_the_tour_files_are_the_example_files_as_printed() -> None:
    tour = EXAMPLES / "tour"
    assert (tour / "flows" / "approval.yaml").read_text(encoding="utf-8") == APPROVAL
    assert (tour / "orders.py").read_text(encoding="utf-8") == ORDERS


def test_the_tour_commands_print_what_the_readme_shows(tmp_path: Path) -> None:
    folder = example_copy("tour", tmp_path)
    run_console(SEND, folder)
    run_console(RUN_ORDER, folder)
    result = subprocess.run([str(TARRY), "validate"], cwd=folder, capture_output=True,
                            text=True, timeout=60, check=False)
    assert (result.returncode, result.stderr) == (
        0, "1 flow file, 1 event manifest and 1 app of Python flows valid\n")


async def test_the_event_and_python_flows_do_what_the_tour_says(tmp_path: Path) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(ORDERS, "README.md", "exec"), namespace)
    manifests = (EXAMPLES / "tour" / "events.yaml").read_text(encoding="utf-8")
    with Harness(tmp_path, app=namespace["app"], manifests=manifests) as harness:
        approval = harness.start(harness.flow(APPROVAL), {"ticket": "T-7"})
        order = harness.start("settle-order", {"order_id": "A1"})
        await harness.advance(timedelta(days=2, hours=1))
        assert harness.record(approval).exit == "escalated"
        harness.send("order.approval", {"order": "A1"})
        await harness.run_due()
        assert harness.document(order)["result"] == "approved"

"""The README shows only what works: its commands, flows, outputs and code are checked here."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from markdown_blocks import ROOT, block_after
from typer.testing import CliRunner

from tarry.cli import app
from tarry.testing import Harness

README = (ROOT / "README.md").read_text(encoding="utf-8")
HELLO = ROOT / "examples" / "waiting" / "flows" / "hello.yaml"


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


async def test_the_harness_example_passes(tmp_path: Path) -> None:
    code = block_after(README, "### Testing flows on a virtual clock", "python")
    namespace: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    await namespace["test_cooling_off_takes_exactly_two_days"](tmp_path)


async def test_the_event_and_python_flows_do_what_the_tour_says(tmp_path: Path) -> None:
    manifests = "events:\n  ticket.reply: { correlate_on: [ticket] }\n" \
                "  order.approval: { correlate_on: [order] }\n"
    code = block_after(README, "### Flows in Python", "python")
    namespace: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    harness = Harness(tmp_path, app=namespace["app"], manifests=manifests)
    approval = harness.start(harness.flow(block_after(README, "### Waiting for an event", "yaml")),
                             {"ticket": "T-7"})
    order = harness.start("settle-order", {"order_id": "A1"})
    await harness.advance(timedelta(days=2, hours=1))
    assert harness.record(approval).exit == "escalated"
    harness.send("order.approval", {"order": "A1"})
    await harness.run_due()
    assert harness.document(order)["result"] == "approved"
    harness.close()

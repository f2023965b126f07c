"""docs/tasks.md shows only what works: its flow runs and is answered by its scenario, its
Python flow asks and gets the answer, its task document has the shape the code prints, and
the messages it quotes are the code's."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType

import pytest

from markdown_blocks import ROOT, TARRY, Document, fresh_project, run_console
from tarry.config import load_settings
from tarry.engine.documents import task_document
from tarry.scenarios import parse_scenario, run_scenario
from tarry.testing import Harness

GUIDE = Document("docs/tasks.md", __file__)
FLOW = GUIDE.block("yaml", after="## The `ask` step")
BINDING = GUIDE.block("json", after="## What it binds")
SESSION = GUIDE.block("console", after="## The command line")
SCENARIO = GUIDE.block("yaml", after="## Testing")
PYTHON_FLOW = GUIDE.block("python", after="## Python flows")
TASK_DOCUMENT = GUIDE.block("json", after="## The task document")
SHOWN_TASK_ID = "3f2c9a1e0b7d4c3a"
REQUEST = {"id": "R-7", "issue": "the amount is missing"}
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


async def test_the_guides_flow_and_scenario_pass(tmp_path: Path) -> None:
    root = fresh_project(tmp_path / "p")
    (root / "flows" / "reply-check.yaml").write_text(FLOW, encoding="utf-8")
    scenario = parse_scenario(SCENARIO, "guide.yaml")
    result = await run_scenario(scenario, load_settings(root), directory=tmp_path)
    assert result.passed, result.mismatches


async def test_the_guides_python_flow_asks_and_gets_the_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = ModuleType("tasks_guide_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(PYTHON_FLOW, "<docs/tasks.md>", "exec"), module.__dict__)
    harness = Harness(tmp_path, start=START, app=module.__dict__["app"])
    try:
        run_id = harness.start("approve-refund", {"amount": 40})
        await harness.run_due()
        harness.complete_task(run_id, "approve", outcome="approve", data={"note": "ok"},
                              by="finance")
        await harness.run_until_idle()
        assert harness.record(run_id).result == "approve by finance"
    finally:
        harness.close()


async def test_the_task_document_shown_has_the_printed_shape(tmp_path: Path) -> None:
    harness = Harness(tmp_path, start=START)
    try:
        run_id = harness.start(harness.flow(FLOW), {"request": REQUEST})
        await harness.run_due()
        await harness.advance(timedelta(days=1))
        printed = task_document(harness.task(run_id, "review"))
    finally:
        harness.close()
    shown = json.loads(TASK_DOCUMENT)
    assert list(shown) == list(printed)
    volatile = {"id", "run"}
    assert {k: v for k, v in shown.items() if k not in volatile} == {
        k: v for k, v in printed.items() if k not in volatile}


def test_the_quoted_load_messages_are_the_codes() -> None:
    sys.path.insert(0, str(ROOT / "tests" / "language"))
    try:
        import test_loader_tasks as cases  # noqa: PLC0415 - the loader's exact-message table
    finally:
        sys.path.pop(0)
    produced = {message.split(": ", 1)[1]
                for mark in cases.test_refusals.pytestmark if mark.name == "parametrize"
                for steps, _expected in mark.args[1]
                for message in cases.problems(steps)}
    section = GUIDE.text[GUIDE.text.index("## Load-time"):GUIDE.text.index("## Completing")]
    quoted = re.findall(r"^\| [^|]+ \| `(.+)` \|$", section, re.MULTILINE)
    assert len(quoted) == 9
    assert set(quoted) <= produced


async def test_a_completed_review_binds_what_the_guide_shows(tmp_path: Path) -> None:
    harness = Harness(tmp_path, start=START)
    try:
        run_id = harness.start(harness.flow(FLOW), {"request": REQUEST})
        await harness.run_due()
        await harness.advance(timedelta(hours=5))
        harness.complete_task(run_id, "review", outcome="accept", data={"note": "fine"},
                              by="alice")
        await harness.run_until_idle()
        binding = harness.document(run_id)["bindings"]["review"]
    finally:
        harness.close()
    assert binding == json.loads(BINDING)


def test_the_command_line_lists_and_completes_the_task_as_shown(tmp_path: Path) -> None:
    root = fresh_project(tmp_path / "p")
    (root / "flows" / "reply-check.yaml").write_text(FLOW, encoding="utf-8")
    for args in (["start", "reply-check", "--inputs", json.dumps({"request": REQUEST})],
                 ["worker", "--once"]):
        subprocess.run([str(TARRY), *args], cwd=root, capture_output=True, timeout=60,
                       check=True)
    listed = subprocess.run([str(TARRY), "tasks", "--json"], cwd=root, capture_output=True,
                            text=True, timeout=60, check=True)
    [task] = json.loads(listed.stdout)
    run_console(SESSION.replace(SHOWN_TASK_ID, task["id"]), root)

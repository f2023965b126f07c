"""docs/flows.md "Calling another flow": its flows load and run as it says (the child
started and bound, the timeout, the parallel children), and tarry validate prints what it
shows for the calls that do not fit."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from markdown_blocks import Document, fresh_project, run_console
from tarry.model import RunStatus
from tarry.testing import Harness

GUIDE = Document("docs/flows.md", __file__)
SECTION = {"after": "## Calling another flow", "before": "## Waiting for capacity"}
CHILD, PARENT, TEAM, TYPO = GUIDE.blocks("yaml", **SECTION)
VALIDATE = GUIDE.block("console", **SECTION)
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _name(block: str) -> str:
    return block.splitlines()[0].removeprefix("# flows/").removesuffix(".yaml")


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    flows = tmp_path / "flows"
    flows.mkdir()
    for block in (CHILD, PARENT, TEAM):
        (flows / f"{_name(block)}.yaml").write_text(block, encoding="utf-8")
    with Harness(tmp_path, start=START, store_url=store_url) as h:
        yield h


async def test_the_parent_binds_the_childs_outcome(harness: Harness) -> None:
    run_id = harness.start("new-hire", {"user": "ada"})
    await harness.run_until_idle()
    document = harness.document(run_id)
    [child] = document["children"]
    assert document["status"] == "succeeded"
    assert document["bindings"]["account"] == {"status": "succeeded", "exit": "provisioned",
                                               "result": None, "error": None, "run": child}
    kid = harness.document(child)
    assert (kid["parent"], kid["target"], kid["inputs"]) == (run_id, "ada", {"user": "ada"})
    assert harness.clock.now() == START + timedelta(hours=1)


async def test_at_the_timeout_the_child_is_cancelled(harness: Harness,
                                                     tmp_path: Path) -> None:
    slow = CHILD.replace("for: 1h", "for: 2d")
    assert slow != CHILD
    (tmp_path / "flows" / "provision-account.yaml").write_text(slow, encoding="utf-8")
    run_id = harness.start("new-hire", {"user": "ada"})
    await harness.run_until_idle()
    document = harness.document(run_id)
    [child] = document["children"]
    assert document["status"] == "succeeded"
    assert document["bindings"]["account"]["status"] == "timeout"
    assert document["bindings"]["welcome"] == {"skipped": True}
    kid = harness.record(child)
    assert (kid.status, kid.cancelled_by) == (RunStatus.CANCELLED, "parent")
    assert harness.clock.now() == START + timedelta(days=1)


async def test_children_run_in_parallel_from_a_for_each(harness: Harness) -> None:
    run_id = harness.start("new-team", {"users": ["ada", "bob", "cy"]})
    await harness.run_due()
    assert len(harness.engine.store.children(run_id)) == 3
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert document["status"] == "succeeded"
    assert [each["account"]["exit"] for each in document["bindings"]["accounts"]] == [
        "provisioned"] * 3
    assert harness.clock.now() == START + timedelta(hours=1)
    assert harness.record(run_id).status is RunStatus.SUCCEEDED


def test_validate_shows_the_calls_that_do_not_fit(tmp_path: Path) -> None:
    project = fresh_project(tmp_path / "project")
    for block in (CHILD, PARENT, TEAM, TYPO):
        (project / "flows" / f"{_name(block)}.yaml").write_text(block, encoding="utf-8")
    run_console(VALIDATE, project)

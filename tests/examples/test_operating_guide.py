"""docs/operating.md shows only what works: its flow fails, is retried with a corrected input
and succeeds without running its first step again; its rerun and bulk sessions print what the
command line prints; its batch request is one the API takes, and its batch document has the
shape the code prints."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from markdown_blocks import TARRY, Document, console_commands, shown_line
from tarry.clock import from_iso
from tarry.engine.documents import batch_document
from tarry.model import BatchAction, BatchFilter, BatchRecord
from tarry.server.api.models import StartBatch

GUIDE = Document("docs/operating.md", __file__)
FLOW = GUIDE.block("yaml", after="## Retry a failed run")
RETRY = GUIDE.block("console", after="## Retry a failed run")
RERUN = GUIDE.block("console", after="## Rerun")
BULK = GUIDE.block("console", after="## Every run a filter selects")
BATCH_REQUEST = GUIDE.block("json", after="## Over HTTP", before="and the batch document")
BATCH_DOCUMENT = GUIDE.block("json", after="and the batch document")
SHOWN_ID = "5f0c9a1e2b7d4c3a9e8f7a6b5c4d3e2f"


def _tarry(folder: Path, command: str) -> list[str]:
    """What ``command`` prints (standard output, then standard error), line by line."""
    environment = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    result = subprocess.run(f"{TARRY} {command.removeprefix('tarry ')}", shell=True,
                            cwd=folder, env=environment, capture_output=True, text=True,
                            timeout=60, check=False)
    return [line.rstrip() for line in (result.stdout + result.stderr).splitlines()]


def _session(block: str, folder: Path) -> str:
    """Run a console block in ``folder`` with the real executable, its first run's id (the
    one the block shows as ``5f0c9a1e…``) put in the commands that name it; check that each
    prints the lines shown. The first run's id."""
    (folder / "flows").mkdir(parents=True)
    (folder / "flows" / "deliver.yaml").write_text(FLOW, encoding="utf-8")
    first = SHOWN_ID
    for command, shown in console_commands(block):
        printed = _tarry(folder, command.replace(SHOWN_ID[:8], first[:8]))
        assert len(printed) == len(shown), (command, printed)
        for line, expected in zip(printed, shown, strict=True):
            assert shown_line(expected).fullmatch(line), (command, line, expected)
        if first == SHOWN_ID:
            first = next(word.strip("()") for word in " ".join(printed).split()
                         if len(word) == 32 and all(c in "0123456789abcdef" for c in word))
    return first


def test_the_retry_session_runs_as_shown_and_the_first_step_runs_once(tmp_path: Path) -> None:
    run_id = _session(RETRY, tmp_path)
    shown = "\n".join(_tarry(tmp_path, f"tarry show {run_id[:8]}"))
    assert f"run {run_id} (deliver): succeeded with exit 'completed'" in shown
    assert "attempt 2 (retried 1 time)" in shown
    document = json.loads("\n".join(_tarry(tmp_path, f"tarry show {run_id} --json")))
    assert [entry["kind"] for entry in document["history"]].count("log") == 2  # pack, ship
    [retried] = [entry["data"] for entry in document["history"] if entry["kind"] == "retried"]
    assert (retried["reason"], retried["inputs"]) == ("finance approved it", ["approved"])


def test_the_rerun_session_runs_as_shown(tmp_path: Path) -> None:
    first = _session(RERUN, tmp_path)
    document = json.loads("\n".join(_tarry(tmp_path, f"tarry show {first} --json")))
    [rerun] = document["reruns"]
    again = json.loads("\n".join(_tarry(tmp_path, f"tarry show {rerun} --json")))
    assert (again["rerun_of"], again["inputs"]) == (first, {"order": "A-9", "approved": True})


def test_the_bulk_session_runs_as_shown(tmp_path: Path) -> None:
    _session(BULK, tmp_path)
    listed = json.loads("\n".join(_tarry(tmp_path, "tarry runs --json")))
    assert [run["status"] for run in listed] == ["cancelled", "cancelled"]


def test_the_batch_request_is_one_the_api_takes() -> None:
    request = StartBatch.model_validate_json(BATCH_REQUEST)
    assert (request.action, request.filter.older_than) == (BatchAction.CANCEL, "7d")


def test_the_batch_document_shown_has_the_printed_shape() -> None:
    shown = json.loads(BATCH_DOCUMENT)
    printed = batch_document(BatchRecord(
        id=shown["id"], action=BatchAction.CANCEL,
        filter=BatchFilter(flow="deliver", waiting_for="timer",
                           created_before=from_iso(shown["filter"]["created_before"])),
        reason=shown["reason"], by=shown["by"], total=shown["total"],
        created_at=from_iso(shown["created_at"]), updated_at=from_iso(shown["updated_at"]),
        cursor=(from_iso(shown["created_at"]), ""), acted=shown["acted"],
        skipped=shown["skipped"]))
    assert printed == shown


MOVING = "## Moving waiting runs to a fixed flow"
NUDGE = GUIDE.block("yaml", after=MOVING)
NUDGE_FIXED = GUIDE.block("yaml", after="Fix the message in the file")
WAITS = GUIDE.block("console", after=MOVING)
MOVES = GUIDE.block("console", after="Then see which runs would move")
STAYS = GUIDE.block("console", after="Had the fix also renamed")


def _shown(block: str, folder: Path) -> None:
    """Run each command of a console block in ``folder``; each prints the lines shown."""
    for command, shown in console_commands(block):
        printed = _tarry(folder, command)
        assert len(printed) == len(shown), (command, printed)
        for line, expected in zip(printed, shown, strict=True):
            assert shown_line(expected).fullmatch(line), (command, line, expected)


def _nudge_waiting(folder: Path) -> None:
    (folder / "flows").mkdir(parents=True)
    (folder / "flows" / "nudge-signup.yaml").write_text(NUDGE, encoding="utf-8")
    _shown(WAITS, folder)


def test_the_moving_session_runs_as_shown_and_the_run_is_on_the_fixed_flow(
        tmp_path: Path) -> None:
    _nudge_waiting(tmp_path)
    (tmp_path / "flows" / "nudge-signup.yaml").write_text(NUDGE_FIXED, encoding="utf-8")
    _shown(MOVES, tmp_path)
    [run] = json.loads("\n".join(_tarry(tmp_path, "tarry runs --json")))
    document = json.loads("\n".join(_tarry(tmp_path, f"tarry show {run['id']} --json")))
    [moved] = [entry for entry in document["history"] if entry["kind"] == "migrated"]
    assert sorted(moved["data"]) == ["by", "from", "to"]
    assert document["status"] == "waiting"
    assert _tarry(tmp_path, "tarry runs migrate --flow nudge-signup --yes") == [
        "nudge-signup: no run to move; 1 already on the new definition"]


def test_a_run_that_cannot_move_is_listed_as_shown(tmp_path: Path) -> None:
    _nudge_waiting(tmp_path)
    renamed = NUDGE_FIXED.replace("- settle:", "- settled:")
    (tmp_path / "flows" / "nudge-signup.yaml").write_text(renamed, encoding="utf-8")
    _shown(STAYS, tmp_path)

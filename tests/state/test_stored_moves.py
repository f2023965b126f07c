"""Stored waiting runs of every release (see record_states.py) move to a new definition of
their flow, on both stores, and then finish on it: a step appended to the flow runs after
the wait they were caught in. The move judges and rewrites the state as it is stored (an
older release's shape included), so a later change of the state's shape that would break
moving waiting runs fails here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from record_moves import MOVE_CASES
from record_states import CASES, HERE, harness, play
from test_stored_states import _finished_as_expected, _load, _wait_of, _wait_of_stored

from tarry.clock import from_iso
from tarry.engine.versions import STATE_VERSION
from tarry.model import MIGRATED

YAML_CASES = {case.name: case for case in CASES if not case.name.startswith("sdk-")}
STORED = sorted(path for path in HERE.glob("v*/*.json") if path.stem in YAML_CASES)
APPENDED = "  - moved: { set: { on: new } }\n"
"""A step appended to every stored flow (each ends with its top-level steps)."""


def test_every_version_has_a_stored_yaml_run_of_every_case_to_move() -> None:
    for version in range(STATE_VERSION + 1):
        assert sorted(p.stem for p in STORED if p.parent.name == f"v{version}") == sorted(
            name for name, case in YAML_CASES.items() if case.since <= version)


def _fixed(stored: dict[str, Any], directory: Path) -> None:
    """Write the stored run's flow, with a step appended, into the flows folder."""
    flows = directory / "flows"
    flows.mkdir()
    source: str = stored["source"]
    (flows / f"{stored['run']['flow']}.yaml").write_text(source + APPENDED, encoding="utf-8")


@pytest.mark.parametrize("path", STORED, ids=lambda p: f"{p.parent.name}-{p.stem}")
async def test_a_stored_waiting_run_moves_to_a_new_definition_and_finishes_on_it(
        path: Path, tmp_path: Path, store_url: str) -> None:
    stored = json.loads(path.read_text(encoding="utf-8"))
    case = YAML_CASES[stored["case"]]
    h = harness(tmp_path, start=from_iso(stored["now"]), store_url=store_url)
    try:
        run_id = _load(h, stored)
        _fixed(stored, tmp_path)
        report = h.engine.migrate_runs(stored["run"]["flow"], by="ci", dry_run=False)
        assert [(run.run_id, run.outcome, run.reasons) for run in report.runs] == [
            (run_id, "moved", ())]
        moved = h.record(run_id)
        assert moved.flow_digest == report.to_digest
        assert moved.state["version"] == STATE_VERSION
        await h.run_due()  # resumed on the new definition: it waits for the same thing
        record = h.record(run_id)
        assert record.status.value == stored["run"]["status"]
        assert _wait_of(record) == _wait_of_stored(stored)
        await play(h, case.after)
        document = h.document(run_id)
        _finished_as_expected(case, document)
        assert document["bindings"]["moved"] == {"on": "new"}
        assert MIGRATED in h.history_kinds(run_id)
    finally:
        h.close()


MOVE_STORED = sorted((HERE / "moves").glob("v*/*.json"))
BY_MOVE = {moving.case.name: moving for moving in MOVE_CASES}


def test_the_current_version_has_a_stored_run_of_every_move_case() -> None:
    current = sorted(p.stem for p in MOVE_STORED if p.parent.name == f"v{STATE_VERSION}")
    assert current == sorted(BY_MOVE)


@pytest.mark.parametrize("path", MOVE_STORED, ids=lambda p: f"{p.parent.name}-{p.stem}")
async def test_a_stored_run_caught_deep_in_a_flow_moves_and_finishes_on_the_fix(
        path: Path, tmp_path: Path, store_url: str) -> None:
    stored = json.loads(path.read_text(encoding="utf-8"))
    moving = BY_MOVE[stored["case"]]
    h = harness(tmp_path, start=from_iso(stored["now"]), store_url=store_url)
    try:
        run_id = _load(h, stored)
        flows = tmp_path / "flows"
        flows.mkdir()
        (flows / f"{stored['run']['flow']}.yaml").write_text(moving.fixed, encoding="utf-8")
        report = h.engine.migrate_runs(stored["run"]["flow"], by="ci", dry_run=False)
        assert [(run.run_id, run.outcome, run.reasons) for run in report.runs] == [
            (run_id, "moved", ())]
        await h.run_due()
        record = h.record(run_id)
        assert record.status.value == stored["run"]["status"]
        assert _wait_of(record) == _wait_of_stored(stored)
        await play(h, moving.case.after)
        _finished_as_expected(moving.case, h.document(run_id))
        logged = [entry.data["message"] for entry in h.engine.store.history(run_id)
                  if entry.kind == "log"]
        assert logged == list(moving.logged)
    finally:
        h.close()

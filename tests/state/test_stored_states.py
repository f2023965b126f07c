"""Stored states of every release (see record_states.py) resume, on both stores, exactly as
the release that wrote them would have: each waits for the same thing once loaded, then
finishes with the recorded outcome. A state newer than the code is refused by name."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from record_states import CASES, HERE, Case, harness, path_of, play

from tarry.clock import from_iso
from tarry.engine.versions import STATE_VERSION, UPGRADES, upgrade
from tarry.errors import StateVersionError
from tarry.model import JournalEntry, NewRun, RunStatus

STORED = sorted(HERE.glob("v*/*.json"))
BY_NAME = {case.name: case for case in CASES}
WAIT_FIELDS = ("kind", "step", "until", "event_type", "match")


def test_every_version_up_to_the_current_one_has_every_case() -> None:
    for version in range(STATE_VERSION + 1):
        assert sorted(p.stem for p in (HERE / f"v{version}").glob("*.json")) == sorted(
            name for name, case in BY_NAME.items() if case.since <= version), (
            f"stored states of version {version}")
    assert sorted(UPGRADES) == list(range(STATE_VERSION))


def _load(h: Any, stored: dict[str, Any]) -> str:
    """Put the stored run into the harness's store, due at once (and the children it waits
    for, due when they were); its id."""
    run = stored["run"]
    store = h.engine.store
    store.save_flow(run["flow_digest"], run["flow"], stored["source"])
    store.create_run(NewRun(
        id=run["id"], flow=run["flow"], flow_digest=run["flow_digest"],
        status=RunStatus(run["status"]), inputs=run["inputs"], target=run["target"],
        created_at=from_iso(run["created_at"]), due_at=h.clock.now(), state=run["state"],
        waiting_for=run["waiting_for"],
        journal=tuple(JournalEntry(*entry) for entry in stored["journal"])), [])
    for child in stored.get("children", []):
        kid = child["run"]
        store.save_flow(kid["flow_digest"], kid["flow"], child["source"])
        store.create_run(NewRun(
            id=kid["id"], flow=kid["flow"], flow_digest=kid["flow_digest"],
            status=RunStatus(kid["status"]), inputs=kid["inputs"], target=kid["target"],
            created_at=from_iso(kid["created_at"]), due_at=from_iso(kid["due_at"]),
            state=kid["state"], waiting_for=kid["waiting_for"], parent_id=kid["parent_id"],
            parent_step=kid["parent_step"]), [])
    return str(run["id"])


def _wait_of(record: Any) -> dict[str, Any]:
    waiting = record.waiting_for or {}
    return {key: waiting.get(key) for key in WAIT_FIELDS}


def _finished_as_expected(case: Case, document: dict[str, Any]) -> None:
    expect = case.expect
    assert document["status"] == expect["status"], document.get("error")
    if "exit" in expect:
        assert document["exit"] == expect["exit"]
    if "result" in expect:
        assert document["result"] == expect["result"]
    for name, binding in expect.get("bindings", {}).items():
        assert _subset(binding, document["bindings"][name]), (name, document["bindings"])


def _subset(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and _subset(value, actual[key]) for key, value in expected.items())
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(actual) == len(expected)
                and all(_subset(e, a) for e, a in zip(expected, actual, strict=True)))
    return bool(expected == actual)


@pytest.mark.parametrize("path", STORED, ids=lambda p: f"{p.parent.name}-{p.stem}")
async def test_a_stored_state_resumes_as_it_was_left(path: Path, tmp_path: Path,
                                                      store_url: str) -> None:
    stored = json.loads(path.read_text(encoding="utf-8"))
    case = BY_NAME[stored["case"]]
    h = harness(tmp_path, start=from_iso(stored["now"]), store_url=store_url)
    try:
        run_id = _load(h, stored)
        await h.run_due()  # a wake with nothing due: the run must wait again, unchanged
        record = h.record(run_id)
        assert record.status.value == stored["run"]["status"]
        assert _wait_of(record) == _wait_of_stored(stored)
        due = stored["run"]["due_at"]
        assert record.due_at == (from_iso(due) if due else None)  # a child wait: no due_at
        assert record.state["version"] == STATE_VERSION
        await play(h, case.after)
        _finished_as_expected(case, h.document(run_id))
    finally:
        h.close()


def _wait_of_stored(stored: dict[str, Any]) -> dict[str, Any]:
    waiting = stored["run"]["waiting_for"] or {}
    return {key: waiting.get(key) for key in WAIT_FIELDS}


def test_a_state_newer_than_the_code_is_refused_naming_both_versions() -> None:
    with pytest.raises(StateVersionError) as caught:
        upgrade({"version": STATE_VERSION + 1, "root": {}})
    assert str(caught.value) == (
        f"the run's state is version {STATE_VERSION + 1}, newer than this tarry understands "
        f"(version {STATE_VERSION}): upgrade tarry to resume it")
    assert caught.value.details == {"found": STATE_VERSION + 1, "supported": STATE_VERSION}


def test_a_state_without_a_version_is_upgraded_from_version_0() -> None:
    assert upgrade({"root": {"at": 0, "phase": "steps", "b": {}}})["version"] == STATE_VERSION


async def test_a_worker_leaves_a_run_of_a_newer_release_untouched(
        tmp_path: Path, store_url: str, caplog: pytest.LogCaptureFixture) -> None:
    stored = json.loads(path_of(STATE_VERSION, "yaml-timer").read_text(encoding="utf-8"))
    stored["run"]["state"]["version"] = STATE_VERSION + 1
    h = harness(tmp_path, start=from_iso(stored["now"]), store_url=store_url)
    try:
        run_id = _load(h, stored)
        with caplog.at_level(logging.ERROR, logger="tarry.worker"):
            await h.run_due()
        record = h.record(run_id)
        assert record.state == stored["run"]["state"]
        assert record.status is RunStatus.RUNNING  # leased, never written: its lease lapses
        assert (f"run {run_id}: the run's state is version {STATE_VERSION + 1}, newer than "
                f"this tarry understands (version {STATE_VERSION}): upgrade tarry to resume "
                "it; it is left as it is") in caplog.messages
    finally:
        h.close()

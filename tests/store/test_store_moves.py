"""Store.move_run on both stores: a run as the plan saw it moves (its definition, its state,
its history entry, due at once only when asked); a run that changed meanwhile (claimed by a
worker, its state rewritten, moved by someone else) is left exactly as it is."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from tarry.model import MIGRATED, HistoryEntry, MovePlan, NewRun, RunStatus, RunUpdate
from tarry.store.base import Store

NOW = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
LATER = NOW + timedelta(hours=1)
STATE: dict[str, Any] = {"version": 3, "root": {"at": 1, "phase": "steps", "b": {},
                                                "cur": {"until": "2026-06-01T10:00:00.000Z"}}}
MOVED: dict[str, Any] = {**STATE, "root": {**STATE["root"], "at": 2}}


def _waiting(store: Store, status: RunStatus = RunStatus.WAITING) -> str:
    store.save_flow("old", "f", "flow: f\nsteps: []\n")
    store.create_run(NewRun(id="r1", flow="f", flow_digest="old", status=status, inputs={},
                            target=None, created_at=NOW, due_at=LATER, state=STATE), [])
    return "r1"


def _plan(status: RunStatus = RunStatus.WAITING, *, wake: bool = False) -> MovePlan:
    return MovePlan("r1", status, STATE, "old", "new", MOVED,
                    HistoryEntry(NOW, MIGRATED, None, {"from": "old", "to": "new", "by": "ops"}),
                    wake=wake)


def test_a_run_as_the_plan_saw_it_moves_with_its_state_and_history(store: Store) -> None:
    run_id = _waiting(store)
    moved = store.move_run(_plan(), NOW)
    assert moved is not None
    assert (moved.flow_digest, moved.state, moved.status, moved.due_at) == (
        "new", MOVED, RunStatus.WAITING, LATER)
    assert store.get_run(run_id) == moved
    [entry] = store.history(run_id)
    assert (entry.kind, entry.data) == (MIGRATED, {"from": "old", "to": "new", "by": "ops"})


def test_a_move_that_changes_what_the_run_waits_for_makes_it_due_now(store: Store) -> None:
    _waiting(store)
    moved = store.move_run(_plan(wake=True), NOW)
    assert moved is not None
    assert moved.due_at == NOW


def test_a_held_run_moves_too(store: Store) -> None:
    _waiting(store, RunStatus.HELD)
    moved = store.move_run(_plan(RunStatus.HELD), NOW)
    assert moved is not None
    assert (moved.status, moved.flow_digest) == (RunStatus.HELD, "new")


def test_a_run_claimed_meanwhile_is_left_alone(store: Store) -> None:
    run_id = _waiting(store)
    [claimed] = store.claim_due(LATER, "w1", LATER + timedelta(seconds=30), 10)
    before = store.get_run(run_id)
    assert store.move_run(_plan(), LATER) is None
    assert store.get_run(run_id) == before
    assert store.history(run_id) == []
    assert claimed.id == run_id


def test_a_run_whose_state_changed_meanwhile_is_left_alone(store: Store) -> None:
    run_id = _waiting(store)
    store.claim_due(LATER, "w1", LATER + timedelta(seconds=30), 10)
    later = LATER + timedelta(hours=1)
    changed = {**STATE, "root": {**STATE["root"], "cur": {"until": "2026-06-01T11:00:00.000Z"}}}
    store.checkpoint("w1", LATER, [RunUpdate(run_id, RunStatus.WAITING, changed, [],
                                             due_at=later)])
    before = store.get_run(run_id)
    assert before.status is RunStatus.WAITING
    assert store.move_run(_plan(), LATER) is None
    assert store.get_run(run_id) == before


def test_a_run_moved_by_someone_else_first_is_left_alone(store: Store) -> None:
    run_id = _waiting(store)
    assert store.move_run(_plan(), NOW) is not None
    after = store.get_run(run_id)
    assert store.move_run(replace(_plan(), to_digest="newer"), NOW) is None
    assert store.get_run(run_id) == after

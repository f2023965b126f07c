"""Where runs are in their flow: a checkpoint stores the step (``at_step``), a flow's runs are
counted per step and status, and the run list filters on it; on every backend."""

from __future__ import annotations

from typing import Any

from store_samples import at, new_run

from tarry.model import CheckpointOutcome, RunStatus, RunUpdate
from tarry.store.base import Store


def _checkpointed(store: Store, run_id: str, status: RunStatus, *, flow: str = "quotes",
                  **fields: Any) -> None:
    store.create_run(new_run(run_id, flow=flow, created_at=at(len(run_id))), [])
    store.claim_run(run_id, at(1), "w1", at(30))
    outcome = store.checkpoint("w1", at(1), [RunUpdate(
        run_id=run_id, status=status, state={}, history=[], due_at=at(3600), **fields)])
    assert outcome == {run_id: CheckpointOutcome.SAVED}


def _waiting_at(step: str) -> dict[str, Any]:
    return {"waiting_for": {"kind": "event", "step": step, "until": "2026-01-01T10:00:00.000Z"}}


def test_runs_are_counted_at_the_step_they_wait_or_failed_at_without_loop_indices(
        store: Store) -> None:
    _checkpointed(store, "a", RunStatus.WAITING, **_waiting_at("quotes[0].quote"))
    _checkpointed(store, "bb", RunStatus.WAITING, **_waiting_at("quotes[7].quote"))
    _checkpointed(store, "ccc", RunStatus.WAITING, **_waiting_at("approval"))
    _checkpointed(store, "dddd", RunStatus.FAILED,
                  error={"type": "failed", "message": "no", "step": "quotes[2].request"})
    _checkpointed(store, "eeeee", RunStatus.SUCCEEDED, exit="done")
    _checkpointed(store, "other", RunStatus.WAITING, flow="else", **_waiting_at("approval"))
    store.create_run(new_run("held", flow="quotes", status=RunStatus.HELD,
                             waiting_for={"kind": "hold", "until": None}), [])

    assert store.count_runs_per_step("quotes") == {
        "quotes.quote": {RunStatus.WAITING: 2}, "approval": {RunStatus.WAITING: 1},
        "quotes.request": {RunStatus.FAILED: 1}, None: {RunStatus.HELD: 1}}
    assert store.count_runs_per_step("nothing") == {}


def test_the_run_list_and_its_counts_filter_on_the_step(store: Store) -> None:
    _checkpointed(store, "a", RunStatus.WAITING, **_waiting_at("quotes[0].quote"))
    _checkpointed(store, "bb", RunStatus.WAITING, **_waiting_at("quotes[7].quote"))
    _checkpointed(store, "ccc", RunStatus.WAITING, **_waiting_at("approval"))

    assert [run.id for run in store.list_runs(at_step="quotes.quote")] == ["bb", "a"]
    assert [run.id for run in store.list_runs(flow="quotes", at_step="approval")] == ["ccc"]
    assert [run.id for run in store.list_runs(status=RunStatus.WAITING,
                                              at_step="approval")] == ["ccc"]
    assert store.list_runs(at_step="quotes[0].quote") == []
    assert store.count_runs_per_status(at_step="quotes.quote") == {RunStatus.WAITING: 2}


def test_a_run_that_moves_on_is_counted_at_its_new_step(store: Store) -> None:
    _checkpointed(store, "a", RunStatus.WAITING, **_waiting_at("first"))
    store.claim_run("a", at(3600), "w2", at(3630))
    assert store.count_runs_per_step("quotes") == {"first": {RunStatus.RUNNING: 1}}
    store.checkpoint("w2", at(3600), [RunUpdate(
        run_id="a", status=RunStatus.WAITING, state={}, history=[], due_at=at(7200),
        **_waiting_at("second"))])
    assert store.count_runs_per_step("quotes") == {"second": {RunStatus.WAITING: 1}}
    store.claim_run("a", at(7200), "w2", at(7230))
    store.checkpoint("w2", at(7200), [RunUpdate(
        run_id="a", status=RunStatus.SUCCEEDED, state={}, history=[], exit="done")])
    assert store.count_runs_per_step("quotes") == {}

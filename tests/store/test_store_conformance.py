"""The store contract, run against every backend (the ``store`` fixture is parametrized)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from store_samples import LEASE, T0, at, entry, eventually, new_run, suspend

from tarry.errors import FlowNotFound, RunNotFound, RunStateError
from tarry.model import (
    CheckpointOutcome,
    EventWait,
    HistoryEntry,
    NewEvent,
    RunStatus,
    RunUpdate,
    TaskRequest,
)
from tarry.store.base import IDEMPOTENCY_KEY_RETENTION, Store

# -- flows ------------------------------------------------------------------------------------


def test_save_flow_is_idempotent_and_keeps_the_first_source(store: Store) -> None:
    store.save_flow("abc", "greet", "flow: greet\n")
    store.save_flow("abc", "greet", "flow: greet\n")
    assert store.flow_source("abc") == "flow: greet\n"


def test_flow_source_of_an_unknown_digest_raises_flow_not_found(store: Store) -> None:
    with pytest.raises(FlowNotFound, match=r"^no flow source saved under digest 'nope'$"):
        store.flow_source("nope")


# -- create, get, history ---------------------------------------------------------------------


def test_a_created_run_reads_back_with_every_field(store: Store) -> None:
    run = new_run("r1", status=RunStatus.HELD, due_at=at(60), target="acme/web#7",
                  inputs={"deal": {"name": "Zoë", "amount": 1.5, "tags": ["a", None]}},
                  state={"hold": {"checks": 0}}, waiting_for={"kind": "hold", "until": None},
                  reason=None)
    store.create_run(run, [entry("created")])

    got = store.get_run("r1")

    assert (got.id, got.flow, got.flow_digest, got.status, got.target) == (
        "r1", "greet", "digest-greet", RunStatus.HELD, "acme/web#7")
    assert got.inputs == {"deal": {"name": "Zoë", "amount": 1.5, "tags": ["a", None]}}
    assert got.state == {"hold": {"checks": 0}}
    assert got.waiting_for == {"kind": "hold", "until": None}
    assert (got.created_at, got.updated_at, got.due_at) == (T0, T0, at(60))
    assert (got.exit, got.error, got.reason, got.result) == (None, None, None, None)
    assert (got.lease_owner, got.cancel_requested, got.cancelled_by) == (None, False, None)


def test_a_create_that_fails_half_way_leaves_nothing_behind(store: Store) -> None:
    unserializable = entry("created", 0, payload=object())
    with pytest.raises(TypeError):
        store.create_run(new_run("r1"), [unserializable])
    with pytest.raises(RunNotFound):
        store.get_run("r1")


def test_get_run_of_an_unknown_id_raises_run_not_found(store: Store) -> None:
    with pytest.raises(RunNotFound, match=r"^no run with id 'nope'$"):
        store.get_run("nope")


def test_history_is_returned_oldest_first_in_insertion_order(store: Store) -> None:
    store.create_run(new_run("r1"), [entry("created"), entry("note", 0, n=1)])
    store.claim_due(T0, "w1", T0 + LEASE, 10)
    store.checkpoint("w1", at(1), [suspend("r1", at(60), history=[
        entry("step started", 1), entry("step completed", 1, n=2)])])

    kinds = [(item.kind, item.data) for item in store.history("r1")]

    assert kinds == [("created", {}), ("note", {"n": 1}), ("step started", {}),
                     ("step completed", {"n": 2})]


def test_a_created_entry_at_the_creation_comes_back_first_with_its_data(
        store: Store) -> None:
    # Kept in the run's own row, not in history (rows.creation_params): read back first.
    store.create_run(new_run("r1", target="acme/web"),
                     [entry("created", 0, target="acme/web", trigger="deploy"),
                      entry("held", 0, until="soon")])
    assert [(item.at, item.kind, item.step, item.data) for item in store.history("r1")] == [
        (T0, "created", None, {"target": "acme/web", "trigger": "deploy"}),
        (T0, "held", None, {"until": "soon"})]


@pytest.mark.parametrize("first", [entry("created", 5, n=1), entry("note", 0),
                                   replace(entry("created"), step="ask")],
                         ids=["created-later", "another-kind", "with-a-step"])
def test_a_first_entry_that_is_not_the_creation_keeps_its_place_and_fields(
        store: Store, first: HistoryEntry) -> None:
    store.create_run(new_run("r1"), [first, entry("created", 7)])
    assert store.history("r1") == [first, entry("created", 7)]


def test_history_keeps_step_and_instant(store: Store) -> None:
    store.create_run(new_run("r1"), [replace(entry("step started", 2.5), step="ask")])
    [item] = store.history("r1")
    assert (item.at, item.step) == (at(2.5), "ask")


def test_history_of_a_run_without_entries_is_empty(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    assert store.history("r1") == []


def test_history_of_an_unknown_run_raises_run_not_found(store: Store) -> None:
    with pytest.raises(RunNotFound, match=r"^no run with id 'nope'$"):
        store.history("nope")


# -- claiming ---------------------------------------------------------------------------------


def test_claim_takes_the_earliest_due_runs_up_to_the_limit(store: Store) -> None:
    for run_id, due in [("late", 3), ("first", 1), ("second", 2)]:
        store.create_run(new_run(run_id, due_at=at(due)), [])

    claimed = store.claim_due(at(10), "w1", at(10) + LEASE, 2)

    assert [run.id for run in claimed] == ["first", "second"]
    assert store.get_run("late").status is RunStatus.PENDING


def test_claim_skips_runs_not_yet_due_and_runs_never_due(store: Store) -> None:
    store.create_run(new_run("due", due_at=at(5)), [])
    store.create_run(new_run("future", due_at=at(6)), [])
    store.create_run(new_run("never", status=RunStatus.WAITING, due_at=None), [])

    assert [run.id for run in store.claim_due(at(5), "w1", at(5) + LEASE, 10)] == ["due"]


def test_a_claimed_run_is_running_and_leased_until_lease_expiry(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    store.claim_due(T0, "w1", at(30), 10)

    got = store.get_run("r1")

    assert (got.status, got.lease_owner, got.due_at, got.updated_at) == (
        RunStatus.RUNNING, "w1", at(30), T0)


@pytest.mark.parametrize("status", [RunStatus.PENDING, RunStatus.WAITING, RunStatus.HELD])
def test_claimed_records_carry_the_status_before_the_claim(store: Store,
                                                           status: RunStatus) -> None:
    store.create_run(new_run("r1", status=status), [])

    [claimed] = store.claim_due(T0, "w1", at(30), 10)

    assert (claimed.status, claimed.lease_owner, claimed.due_at) == (status, "w1", T0)
    assert store.get_run("r1").due_at == at(30)  # stored: the lease's expiry


# -- claims ahead ------------------------------------------------------------------------------


def _waiting_until(store: Store, run_id: str, wake: datetime, **fields: Any) -> None:
    """``run_id`` created, claimed and released to wait until ``wake``."""
    store.create_run(new_run(run_id), [])
    store.claim_run(run_id, T0, "w0", at(30))
    store.checkpoint("w0", T0, [suspend(run_id, wake, **fields)])


def test_a_claim_ahead_takes_timers_due_within_it_each_with_its_instant(store: Store) -> None:
    _waiting_until(store, "soon", at(0.04))
    _waiting_until(store, "later", at(0.06))
    store.create_run(new_run("held", status=RunStatus.HELD, due_at=at(0.03)), [])

    claimed = store.claim_due_with_inbox(T0, "w1", at(30), 10, ahead=at(0.05))

    assert [(record.id, record.status, record.due_at) for record, _ in claimed] == [
        ("held", RunStatus.HELD, at(0.03)), ("soon", RunStatus.WAITING, at(0.04))]
    assert store.get_run("later").lease_owner is None


def test_a_claim_ahead_leaves_a_run_an_event_can_reach_until_it_is_due(store: Store) -> None:
    waits = (EventWait("approval", "slack.approval", '[["message","m"]]', at(0.04)),)
    _waiting_until(store, "r1", at(0.04), waits=waits)

    assert store.claim_due_with_inbox(T0, "w1", at(30), 10, ahead=at(0.05)) == []
    [(claimed, _)] = store.claim_due_with_inbox(at(0.04), "w1", at(30), 10, ahead=at(0.09))
    assert claimed.id == "r1"


def test_a_claim_ahead_leaves_a_run_with_an_open_task_until_it_is_due(store: Store) -> None:
    task = TaskRequest(id="t1", step="approve", title="Approve?", outcomes=("yes", "no"),
                       created_at=T0, until=at(0.04))
    _waiting_until(store, "r1", at(0.04), tasks=(task,))

    assert store.claim_due_with_inbox(T0, "w1", at(30), 10, ahead=at(0.05)) == []
    assert [r.id for r, _ in store.claim_due_with_inbox(at(0.04), "w1", at(30), 10)] == ["r1"]


def test_a_claim_ahead_never_takes_over_a_lease_before_it_lapses(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    store.claim_due(T0, "w1", at(30), 10)

    assert store.claim_due_with_inbox(at(29.99), "w2", at(60), 10, ahead=at(30.04)) == []
    [(taken, _)] = store.claim_due_with_inbox(at(30), "w2", at(60), 10, ahead=at(30.05))
    assert (taken.id, taken.status) == ("r1", RunStatus.RUNNING)


def test_a_claim_with_limit_zero_claims_nothing(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    assert store.claim_due(T0, "w1", at(30), 0) == []
    assert store.get_run("r1").status is RunStatus.PENDING


def test_a_leased_run_is_not_claimed_again_while_its_lease_lives(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    store.claim_due(T0, "w1", at(30), 10)
    assert store.claim_due(at(29.999), "w2", at(60), 10) == []


def test_an_expired_lease_makes_the_run_claimable_by_another_worker(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    store.claim_due(T0, "w1", at(30), 10)

    [taken] = store.claim_due(at(30), "w2", at(60), 10)

    assert (taken.id, taken.status, taken.lease_owner) == ("r1", RunStatus.RUNNING, "w2")


def test_the_old_worker_of_a_taken_over_run_loses_its_lease(store: Store) -> None:
    store.create_run(new_run("r1"), [entry("created")])
    store.claim_due(T0, "w1", at(30), 10)
    store.claim_due(at(31), "w2", at(61), 10)

    outcome = store.checkpoint("w1", at(32), [suspend("r1", at(99), state={"stale": True})])

    assert outcome == {"r1": CheckpointOutcome.LEASE_LOST}
    got = store.get_run("r1")
    assert (got.status, got.lease_owner, got.state, got.due_at) == (
        RunStatus.RUNNING, "w2", {}, at(61))
    assert [item.kind for item in store.history("r1")] == ["created"]
    assert store.renew_leases("w1", ["r1"], at(90)) == set()


def test_claim_run_leases_that_run_when_it_is_due(store: Store) -> None:
    store.create_run(new_run("r1", status=RunStatus.WAITING, due_at=at(5)), [])
    store.create_run(new_run("r0", due_at=at(1)), [])

    claimed = store.claim_run("r1", at(5), "w1", at(35))

    assert claimed is not None
    assert (claimed.id, claimed.status, claimed.lease_owner, claimed.due_at) == (
        "r1", RunStatus.WAITING, "w1", at(5))
    assert store.get_run("r1").due_at == at(35)
    assert store.get_run("r0").status is RunStatus.PENDING


def test_claim_run_returns_none_when_the_run_is_not_due_leased_or_unknown(store: Store) -> None:
    store.create_run(new_run("future", due_at=at(5)), [])
    store.create_run(new_run("leased"), [])
    store.claim_run("leased", T0, "w1", at(30))

    assert store.claim_run("future", at(4), "w2", at(34)) is None
    assert store.claim_run("leased", at(4), "w2", at(34)) is None
    assert store.claim_run("nope", at(4), "w2", at(34)) is None


def test_claim_run_takes_over_a_lapsed_lease(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    store.claim_run("r1", T0, "w1", at(30))

    taken = store.claim_run("r1", at(30), "w2", at(60))

    assert taken is not None
    assert (taken.status, taken.lease_owner) == (RunStatus.RUNNING, "w2")


# -- leases -----------------------------------------------------------------------------------


def test_renew_leases_extends_only_the_leases_the_worker_holds(store: Store) -> None:
    for run_id in ["mine", "theirs", "free"]:
        store.create_run(new_run(run_id, due_at=at(1) if run_id == "free" else T0), [])
    store.claim_run("mine", T0, "w1", at(30))
    store.claim_run("theirs", T0, "w2", at(30))

    held = store.renew_leases("w1", ["mine", "theirs", "free", "nope"], at(90))

    assert held == {"mine"}
    assert store.get_run("mine").due_at == at(90)
    assert store.get_run("theirs").due_at == at(30)


def test_renew_leases_of_no_runs_holds_nothing(store: Store) -> None:
    assert store.renew_leases("w1", [], at(90)) == set()


# -- checkpoint and claim in one transaction --------------------------------------------------


def test_checkpoint_and_claim_saves_the_updates_then_claims_the_due_runs(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    store.create_runs([(new_run("a"), []), (new_run("b", due_at=at(5)), []),
                       (new_run("later", due_at=at(60)), [])])
    store.claim_due(T0, "w1", T0 + LEASE, 1)
    real, transactions = store._transaction, []  # type: ignore[attr-defined]

    def counted(**kwargs: Any) -> Any:
        transactions.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(store, "_transaction", counted)
    outcomes, claimed = store.checkpoint_and_claim("w1", at(10), [suspend("a", at(30))],
                                                   lease_until=at(40), limit=5)
    monkeypatch.undo()

    assert transactions == [{"write": True}]  # one, and it waits for the disk
    assert outcomes == {"a": CheckpointOutcome.SAVED}
    assert [(record.id, record.status, inbox) for record, inbox in claimed] == [
        ("b", RunStatus.PENDING, [])]
    assert (store.get_run("a").status, store.get_run("a").due_at) == (RunStatus.WAITING,
                                                                      at(30))
    assert (store.get_run("b").lease_owner, store.get_run("b").due_at) == ("w1", at(40))
    assert store.get_run("later").lease_owner is None


def test_checkpoint_and_claim_claims_a_run_it_left_due_right_back(store: Store) -> None:
    store.create_run(new_run("a"), [])
    store.claim_due(T0, "w1", T0 + LEASE, 1)

    _, claimed = store.checkpoint_and_claim("w1", at(1), [suspend("a", at(1))],
                                            lease_until=at(31), limit=5)

    assert [(record.id, record.status) for record, _ in claimed] == [("a", RunStatus.WAITING)]
    assert (store.get_run("a").status, store.get_run("a").lease_owner) == (RunStatus.RUNNING,
                                                                           "w1")


def test_checkpoint_and_claim_claims_up_to_its_limit_and_ahead(store: Store) -> None:
    store.create_runs([(new_run(name, status=RunStatus.WAITING, due_at=at(due)), [])
                       for name, due in (("a", 0), ("b", 1), ("c", 20), ("d", 90))])
    store.claim_due(T0, "w1", T0 + LEASE, 1)

    _, claimed = store.checkpoint_and_claim("w1", at(2), [suspend("a", at(600))],
                                            lease_until=at(40), limit=2, ahead=at(30))
    assert [record.id for record, _ in claimed] == ["b", "c"]  # c ahead of its instant
    _, none = store.checkpoint_and_claim("w1", at(2), [], lease_until=at(40), limit=0,
                                         ahead=at(100))
    assert none == []
    assert store.get_run("d").lease_owner is None


# -- which commits wait for the disk ----------------------------------------------------------


class _NamesLookedUp(dict[str, str]):
    """A store's named queries that remember which names its calls looked up."""

    def __init__(self, queries: dict[str, str]) -> None:
        super().__init__(queries)
        self.looked_up: list[str] = []

    def __getitem__(self, name: str) -> str:
        self.looked_up.append(name)
        return super().__getitem__(name)


def _waits_for_the_disk(store: Store, call: Callable[[], object],
                        monkeypatch: pytest.MonkeyPatch) -> bool:
    queries = _NamesLookedUp(dict(store._queries))  # type: ignore[attr-defined]
    monkeypatch.setattr(store, "_queries", queries)
    call()
    monkeypatch.undo()
    return "commit_without_waiting_for_disk" not in queries.looked_up


def test_only_a_claim_commits_without_waiting_for_the_disk(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    # A claim is a lease: lost in a crash, the run is due again, as if its worker had died.
    # Everything a caller is told was written (a start, an event, a checkpoint) waits.
    store.create_runs([(new_run(run_id), []) for run_id in ("a", "b", "c")])
    writes: dict[str, Callable[[], object]] = {
        "claim_due": lambda: store.claim_due(T0, "w1", T0 + LEASE, 1),
        "claim_due_with_inbox": lambda: store.claim_due_with_inbox(T0, "w1", T0 + LEASE, 1),
        "claim_run": lambda: store.claim_run("c", T0, "w1", T0 + LEASE),
        "create_run": lambda: store.create_run(new_run("d"), [entry("created")]),
        "checkpoint": lambda: store.checkpoint("w1", T0, [suspend("a", at(60))]),
        "checkpoint_and_claim": lambda: store.checkpoint_and_claim(
            "w1", T0, [suspend("a", at(90))], lease_until=T0 + LEASE, limit=1),
        "renew_leases": lambda: store.renew_leases("w1", ["b"], at(90)),
        "record_event": lambda: store.record_event(
            NewEvent(id="e1", type="ping", data={}, received_at=T0, match_key=None), T0),
    }

    waits = {name: _waits_for_the_disk(store, write, monkeypatch)
             for name, write in writes.items()}

    assert waits == {"claim_due": False, "claim_due_with_inbox": False, "claim_run": False,
                     "create_run": True, "checkpoint": True, "checkpoint_and_claim": True,
                     "renew_leases": True,
                     "record_event": True}
    assert store.get_run("b").lease_owner == "w1"  # the claims wrote, nonetheless
    assert store.get_run("c").lease_owner == "w1"


# -- checkpoint -------------------------------------------------------------------------------


def test_a_releasing_checkpoint_suspends_the_run_until_its_wake(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    store.claim_due(T0, "w1", at(30), 10)

    outcome = store.checkpoint("w1", at(2), [suspend(
        "r1", at(3600), state={"pc": [1]}, waiting_for={"kind": "timer", "until": "x"})])

    assert outcome == {"r1": CheckpointOutcome.SAVED}
    got = store.get_run("r1")
    assert (got.status, got.lease_owner, got.due_at, got.updated_at) == (
        RunStatus.WAITING, None, at(3600), at(2))
    assert (got.state, got.waiting_for) == ({"pc": [1]}, {"kind": "timer", "until": "x"})
    assert store.claim_due(at(3599), "w2", at(3630), 10) == []
    assert [run.id for run in store.claim_due(at(3600), "w2", at(3630), 10)] == ["r1"]


def test_a_checkpoint_that_keeps_the_lease_keeps_the_lease_expiry(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    store.claim_due(T0, "w1", at(30), 10)

    update = RunUpdate(run_id="r1", status=RunStatus.RUNNING, state={"pc": [2]},
                       history=[entry("step completed", 1)], release=False, due_at=at(5))
    outcome = store.checkpoint("w1", at(1), [update])

    assert outcome == {"r1": CheckpointOutcome.SAVED}
    got = store.get_run("r1")
    assert (got.status, got.lease_owner, got.due_at, got.state) == (
        RunStatus.RUNNING, "w1", at(30), {"pc": [2]})
    assert [item.kind for item in store.history("r1")] == ["step completed"]


@pytest.mark.parametrize("release", [True, False])
def test_a_terminal_checkpoint_ends_the_lease_and_is_never_due(store: Store,
                                                              release: bool) -> None:
    store.create_run(new_run("r1"), [])
    store.claim_due(T0, "w1", at(30), 10)

    update = RunUpdate(run_id="r1", status=RunStatus.FAILED, state={"pc": []},
                       history=[entry("exit", 1)], release=release, due_at=at(5),
                       exit=None, error={"type": "failed", "message": "boom", "step": "ask"},
                       reason=None, result={"answer": 42})
    store.checkpoint("w1", at(1), [update])

    got = store.get_run("r1")
    assert (got.status, got.lease_owner, got.due_at) == (RunStatus.FAILED, None, None)
    assert (got.error, got.result) == ({"type": "failed", "message": "boom", "step": "ask"},
                                       {"answer": 42})
    assert store.next_due_at() is None


def test_a_checkpoint_stores_exit_and_reason(store: Store) -> None:
    store.create_run(new_run("ok"), [])
    store.create_run(new_run("no"), [])
    store.claim_due(T0, "w1", at(30), 10)

    store.checkpoint("w1", at(1), [
        RunUpdate(run_id="ok", status=RunStatus.SUCCEEDED, state={}, history=[],
                  exit="approved"),
        RunUpdate(run_id="no", status=RunStatus.REFUSED, state={}, history=[],
                  reason="hold-expired"),
    ])

    assert store.get_run("ok").exit == "approved"
    assert store.get_run("no").reason == "hold-expired"


def test_one_checkpoint_writes_several_runs_and_skips_lost_ones(store: Store) -> None:
    for run_id in ["a", "b", "c"]:
        store.create_run(new_run(run_id), [])
    store.claim_due(T0, "w1", at(30), 10)
    store.renew_leases("w1", ["a", "b"], at(90))
    store.claim_due(at(31), "w2", at(61), 10)  # takes "c" over

    outcome = store.checkpoint("w1", at(32), [suspend(run_id, at(99)) for run_id in "abc"])

    assert outcome == {"a": CheckpointOutcome.SAVED, "b": CheckpointOutcome.SAVED,
                       "c": CheckpointOutcome.LEASE_LOST}
    assert [store.get_run(run_id).status for run_id in "abc"] == [
        RunStatus.WAITING, RunStatus.WAITING, RunStatus.RUNNING]
    assert [len(store.history(run_id)) for run_id in "abc"] == [1, 1, 0]


def test_a_checkpoint_reports_a_cancel_request(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    store.claim_due(T0, "w1", at(30), 10)
    store.cancel("r1", "alice", at(1))

    keep = RunUpdate(run_id="r1", status=RunStatus.RUNNING, state={}, history=[],
                     release=False)

    assert store.checkpoint("w1", at(2), [keep]) == {"r1": CheckpointOutcome.CANCEL_REQUESTED}


def test_a_checkpoint_that_ends_the_run_ignores_a_cancel_request(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    store.claim_due(T0, "w1", at(30), 10)
    store.cancel("r1", "alice", at(1))

    done = RunUpdate(run_id="r1", status=RunStatus.CANCELLED, state={}, history=[])

    assert store.checkpoint("w1", at(2), [done]) == {"r1": CheckpointOutcome.SAVED}
    got = store.get_run("r1")
    assert (got.status, got.cancelled_by, got.due_at) == (RunStatus.CANCELLED, "alice", None)


def test_a_checkpoint_that_suspends_a_run_asked_to_cancel_cancels_it_in_that_transaction(
        store: Store) -> None:
    store.create_run(new_run("r1"), [])
    store.claim_due(T0, "w1", at(30), 10)
    store.cancel("r1", "alice", at(1))
    waits = (EventWait("approval", "slack.approval", '[["message","m"]]', at(3600)),)
    suspends = RunUpdate(run_id="r1", status=RunStatus.WAITING, state={}, history=[],
                         due_at=at(3600), waiting_for={"kind": "event"}, waits=waits)

    assert store.checkpoint("w1", at(2), [suspends]) == {"r1": CheckpointOutcome.CANCELLED}
    got = store.get_run("r1")
    assert (got.status, got.due_at, got.lease_owner, got.waiting_for) == (
        RunStatus.CANCELLED, None, None, None)
    assert [(e.kind, e.data) for e in store.history("r1")][-1] == ("cancelled",
                                                                   {"by": "request"})
    event = NewEvent(id="e1", type="slack.approval", data={"message": "m"}, received_at=at(3),
                     match_key='[["message","m"]]')
    assert store.record_event(event, at(3)).runs == ()  # its waits went with it


# -- cancel -----------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [RunStatus.HELD, RunStatus.PENDING, RunStatus.WAITING])
def test_cancel_stops_a_run_that_is_not_running_at_once(store: Store,
                                                        status: RunStatus) -> None:
    store.create_run(new_run("r1", status=status, due_at=at(60)), [entry("created")])

    cancelled = store.cancel("r1", "alice", at(5))

    assert (cancelled.status, cancelled.due_at, cancelled.cancelled_by,
            cancelled.updated_at) == (RunStatus.CANCELLED, None, "alice", at(5))
    assert store.get_run("r1") == cancelled
    assert [(item.kind, item.at, item.data) for item in store.history("r1")][-1] == (
        "cancelled", at(5), {"by": "alice"})
    assert store.claim_due(at(100), "w1", at(130), 10) == []


def test_cancel_flags_a_running_run_for_its_worker(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    store.claim_due(T0, "w1", at(30), 10)

    flagged = store.cancel("r1", "alice", at(5))

    assert (flagged.status, flagged.cancel_requested, flagged.lease_owner, flagged.due_at) == (
        RunStatus.RUNNING, True, "w1", at(30))
    assert [(item.kind, item.data) for item in store.history("r1")] == [
        ("cancel_requested", {"by": "alice"})]


@pytest.mark.parametrize("status", [RunStatus.SUCCEEDED, RunStatus.FAILED,
                                    RunStatus.CANCELLED, RunStatus.REFUSED])
def test_cancel_of_a_finished_run_is_refused(store: Store, status: RunStatus) -> None:
    store.create_run(new_run("r1", status=status, due_at=None), [])
    with pytest.raises(RunStateError, match=f"^run r1 already {status.value}$"):
        store.cancel("r1", "alice", at(5))


def test_cancel_of_an_unknown_run_raises_run_not_found(store: Store) -> None:
    with pytest.raises(RunNotFound, match=r"^no run with id 'nope'$"):
        store.cancel("nope", "alice", at(5))


# -- listing and timing -----------------------------------------------------------------------


def _three_runs(store: Store) -> None:
    store.create_run(new_run("old", created_at=at(1), flow="greet"), [])
    store.create_run(new_run("mid", created_at=at(2), flow="deal", status=RunStatus.WAITING),
                     [])
    store.create_run(new_run("new", created_at=at(3), flow="greet", status=RunStatus.WAITING),
                     [])


def test_list_runs_is_newest_first(store: Store) -> None:
    _three_runs(store)
    assert [run.id for run in store.list_runs()] == ["new", "mid", "old"]


@pytest.mark.parametrize(("status", "flow", "expected"), [
    (RunStatus.WAITING, None, ["new", "mid"]),
    (None, "greet", ["new", "old"]),
    (RunStatus.WAITING, "greet", ["new"]),
    (RunStatus.FAILED, None, []),
])
def test_list_runs_filters_by_status_and_flow(store: Store, status: RunStatus | None,
                                              flow: str | None, expected: list[str]) -> None:
    _three_runs(store)
    assert [run.id for run in store.list_runs(status=status, flow=flow)] == expected


def test_list_runs_honours_the_limit(store: Store) -> None:
    _three_runs(store)
    assert [run.id for run in store.list_runs(limit=2)] == ["new", "mid"]


def test_next_due_at_is_the_earliest_due_instant(store: Store) -> None:
    assert store.next_due_at() is None
    store.create_run(new_run("later", due_at=at(20)), [])
    store.create_run(new_run("sooner", due_at=at(10)), [])
    store.create_run(new_run("never", status=RunStatus.SUCCEEDED, due_at=None), [])
    assert store.next_due_at() == at(10)


def test_next_due_at_includes_lease_expiries(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    store.claim_due(T0, "w1", at(30), 10)
    assert store.next_due_at() == at(30)


# -- changes and concurrency ------------------------------------------------------------------


def test_change_token_moves_after_a_write_from_another_store(
        store: Store, store_factory: Callable[[], Store]) -> None:
    other = store_factory()
    before = store.change_token()

    other.create_run(new_run("r1"), [])

    assert eventually(lambda: store.change_token() != before)


def test_change_token_moves_after_a_cancel_from_another_store(
        store: Store, store_factory: Callable[[], Store]) -> None:
    store.create_run(new_run("r1", status=RunStatus.WAITING, due_at=at(60)), [])
    other = store_factory()
    before = store.change_token()

    other.cancel("r1", "alice", at(1))

    assert eventually(lambda: store.change_token() != before)


def test_change_token_is_stable_without_writes(store: Store) -> None:
    store.create_run(new_run("r1"), [])
    first = store.change_token()
    store.get_run("r1")
    assert store.change_token() == first


def test_concurrent_workers_never_claim_the_same_run(
        store: Store, store_factory: Callable[[], Store]) -> None:
    total = 120
    for number in range(total):
        store.create_run(new_run(f"r{number:03}", due_at=at(number % 7)), [])
    workers = [store_factory() for _ in range(4)]
    claims: list[list[str]] = [[] for _ in workers]
    start = threading.Barrier(len(workers))

    def work(index: int) -> None:
        start.wait()
        while batch := workers[index].claim_due(at(10), f"w{index}", at(40), 7):
            claims[index] += [run.id for run in batch]

    threads = [threading.Thread(target=work, args=(index,)) for index in range(len(workers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    every_claim = [run_id for claimed in claims for run_id in claimed]
    assert sorted(every_claim) == [f"r{number:03}" for number in range(total)]
    owners = {run.id: run.lease_owner for run in store.list_runs(limit=total)}
    assert all(owners[run_id] == f"w{index}" for index, claimed in enumerate(claims)
               for run_id in claimed)


def test_one_store_can_be_shared_by_threads(store: Store) -> None:
    total = 40
    errors: list[BaseException] = []

    def create(first: int) -> None:
        try:
            for number in range(first, total, 4):
                store.create_run(new_run(f"r{number:03}"), [entry("created")])
                store.history(f"r{number:03}")
        except BaseException as error:  # reported below, with the thread's traceback
            errors.append(error)

    threads = [threading.Thread(target=create, args=(first,)) for first in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert len(store.list_runs(limit=100)) == total


# -- finding runs by a prefix of their id, counting runs ----------------------------------------

def test_run_ids_starting_with_a_prefix_are_found_in_order(store: Store) -> None:
    for run_id in ("ab12", "ab34", "ac56", "b"):
        store.create_run(new_run(run_id), [])
    assert store.run_ids_starting("ab", limit=5) == ["ab12", "ab34"]
    assert store.run_ids_starting("ab", limit=1) == ["ab12"]
    assert store.run_ids_starting("ac56", limit=2) == ["ac56"]
    assert store.run_ids_starting("ad", limit=2) == []
    assert store.run_ids_starting("b", limit=2) == ["b"]


def test_count_runs_counts_by_status_and_flow_together_or_alone(store: Store) -> None:
    store.create_run(new_run("r1", flow="greet"), [])
    store.create_run(new_run("r2", flow="greet", status=RunStatus.HELD), [])
    store.create_run(new_run("r3", flow="other"), [])
    assert store.count_runs() == 3
    assert store.count_runs(flow="greet") == 2
    assert store.count_runs(status=RunStatus.PENDING) == 2
    assert store.count_runs(status=RunStatus.PENDING, flow="greet") == 1


def test_an_idempotency_key_stays_tied_to_the_first_run_and_request(store: Store) -> None:
    first = store.reserve_idempotency_key("api", "k1", "fp-a", "run-1", T0)
    again = store.reserve_idempotency_key("api", "k1", "fp-b", "run-2", T0)
    other_principal = store.reserve_idempotency_key("ops", "k1", "fp-b", "run-3", T0)
    assert (first, again, other_principal) == (("run-1", "fp-a"), ("run-1", "fp-a"),
                                               ("run-3", "fp-b"))


def test_an_idempotency_key_is_forgotten_a_day_after_it_was_tied(store: Store) -> None:
    store.reserve_idempotency_key("api", "k1", "fp-a", "run-1", T0)
    store.reserve_idempotency_key("api", "k2", "fp-a", "run-2", T0 + timedelta(hours=1))
    within = store.reserve_idempotency_key(
        "api", "k1", "fp-b", "run-3", T0 + IDEMPOTENCY_KEY_RETENTION)
    after = store.reserve_idempotency_key(
        "api", "k1", "fp-b", "run-4", T0 + IDEMPOTENCY_KEY_RETENTION + timedelta(seconds=1))
    kept = store.reserve_idempotency_key(
        "api", "k2", "fp-b", "run-5", T0 + IDEMPOTENCY_KEY_RETENTION + timedelta(seconds=1))
    assert (within, after, kept) == (("run-1", "fp-a"), ("run-4", "fp-b"), ("run-2", "fp-a"))

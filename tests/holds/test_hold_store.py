"""The store's hold verbs on every backend: supersede markers and fleet-wide check slots."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest
from hold_support import LEASE, T0, at, entry, new_run

from tarry.model import HOLD_CLEARED, CheckpointOutcome, RunStatus, RunUpdate
from tarry.store.base import Store

WINDOW = timedelta(minutes=15)


def create_held(store: Store, run_id: str, *, target: str | None = "acme/web#7",
                flow: str = "deploy", seconds: float = 0) -> str | None:
    """Create a held run at T0 + ``seconds``; the superseding sibling, if any."""
    run = new_run(run_id, status=RunStatus.HELD, flow=flow, target=target,
                  created_at=at(seconds), due_at=at(seconds), state={"hold": {}})
    return store.create_held_run(run, [entry("created", seconds)],
                                 recent_since=at(seconds) - WINDOW)


def end_run(store: Store, run_id: str, status: RunStatus, seconds: float = 1,
            kind: str | None = None) -> None:
    """Claim ``run_id`` and end it with ``status`` (refused, or running on after a clear),
    writing one history entry of ``kind`` (the status's name by default)."""
    assert store.claim_run(run_id, at(seconds), "w1", at(seconds) + LEASE) is not None
    update = RunUpdate(run_id, status, {}, [entry(kind or status.value, seconds)],
                       reason="hold-expired" if status is RunStatus.REFUSED else None,
                       due_at=at(seconds + 60))
    assert store.checkpoint("w1", at(seconds), [update]) == {run_id: CheckpointOutcome.SAVED}


# -- supersede markers ---------------------------------------------------------------------


def test_a_held_run_is_created_with_its_history(store: Store) -> None:
    assert create_held(store, "r1") is None

    assert store.get_run("r1").status is RunStatus.HELD
    assert [e.kind for e in store.history("r1")] == ["created"]


def test_a_second_held_run_of_the_same_flow_and_target_is_not_created(store: Store) -> None:
    create_held(store, "r1")

    assert create_held(store, "r2", seconds=5) == "r1"

    assert [run.id for run in store.list_runs()] == ["r1"]


@pytest.mark.parametrize(("flow", "target"), [("deploy", "acme/web#8"), ("other", "acme/web#7")])
def test_another_target_or_another_flow_is_no_sibling(store: Store, flow: str,
                                                      target: str) -> None:
    create_held(store, "r1")

    assert create_held(store, "r2", flow=flow, target=target) is None


def test_runs_without_a_target_never_supersede_each_other(store: Store) -> None:
    assert create_held(store, "r1", target=None) is None
    assert create_held(store, "r2", target=None) is None


def test_a_sibling_being_checked_by_a_worker_still_supersedes(store: Store) -> None:
    create_held(store, "r1")
    store.claim_run("r1", at(1), "w1", at(1) + LEASE)  # running: its gate is being evaluated

    assert create_held(store, "r2", seconds=2) == "r1"


@pytest.mark.parametrize("ending", ["refused", "cancelled"])
def test_a_sibling_refused_or_cancelled_while_held_supersedes_nothing(store: Store,
                                                                      ending: str) -> None:
    create_held(store, "r1")
    if ending == "refused":
        end_run(store, "r1", RunStatus.REFUSED)
    else:
        store.cancel("r1", "ada", at(1))

    assert create_held(store, "r2", seconds=2) is None


def test_a_sibling_that_cleared_supersedes_for_fifteen_minutes(store: Store) -> None:
    create_held(store, "r1")
    end_run(store, "r1", RunStatus.WAITING, seconds=10, kind=HOLD_CLEARED)  # then it waits

    assert create_held(store, "r2", seconds=10 + 15 * 60 - 0.001) == "r1"
    assert create_held(store, "r3", seconds=10 + 15 * 60) is None


def test_a_clear_whose_checkpoint_was_never_written_leaves_the_sibling_held(
        store: Store) -> None:
    create_held(store, "r1")
    store.claim_run("r1", at(10), "w1", at(10) + LEASE)  # cleared; its worker died before
    # the checkpoint that records the clear (and stamps the marker) was written

    assert create_held(store, "r2", seconds=10 + 20 * 60) == "r1"  # r1 is still held
    assert store.get_run("r1").status is RunStatus.RUNNING


def test_concurrent_starts_of_one_target_admit_exactly_one(
        store_factory: Callable[[], Store]) -> None:
    stores = [store_factory() for _ in range(6)]
    barrier = threading.Barrier(len(stores))
    answers: list[str | None] = []

    def start(index: int) -> None:
        barrier.wait()
        answers.append(create_held(stores[index], f"r{index}"))

    threads = [threading.Thread(target=start, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert answers.count(None) == 1
    assert len(stores[0].list_runs()) == 1


# -- check slots -----------------------------------------------------------------------------


def test_no_more_slots_than_allowed_are_handed_out(store: Store) -> None:
    assert store.acquire_check_slot("a", T0, at(30), 2)
    assert store.acquire_check_slot("b", T0, at(30), 2)

    assert not store.acquire_check_slot("c", T0, at(30), 2)


def test_a_released_slot_is_free_again(store: Store) -> None:
    store.acquire_check_slot("a", T0, at(30), 1)
    store.release_check_slot("a")

    assert store.acquire_check_slot("b", T0, at(30), 1)


def test_a_lapsed_slot_lease_no_longer_counts(store: Store) -> None:
    store.acquire_check_slot("a", T0, at(30), 1)  # its worker died mid-check

    assert not store.acquire_check_slot("b", at(29.999), at(60), 1)
    assert store.acquire_check_slot("b", at(30), at(60), 1)


def test_taking_a_slot_again_renews_it(store: Store) -> None:
    store.acquire_check_slot("a", T0, at(30), 1)

    assert store.acquire_check_slot("a", at(20), at(50), 1)
    assert not store.acquire_check_slot("b", at(40), at(70), 1)


def test_releasing_a_slot_that_is_not_held_does_nothing(store: Store) -> None:
    store.release_check_slot("nobody")


def test_concurrent_workers_never_share_the_last_slot(
        store_factory: Callable[[], Store]) -> None:
    stores = [store_factory() for _ in range(8)]
    barrier = threading.Barrier(len(stores))
    granted: list[bool] = []

    def take(index: int) -> None:
        barrier.wait()
        granted.append(stores[index].acquire_check_slot(f"h{index}", T0, at(30), 1))

    threads = [threading.Thread(target=take, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert granted.count(True) == 1


def test_count_runs_counts_by_status(store: Store) -> None:
    create_held(store, "r1")
    create_held(store, "r2", target="acme/web#8")
    store.create_run(new_run("r3"), [entry("created")])

    assert store.count_runs(status=RunStatus.HELD) == 2
    assert store.count_runs(status=RunStatus.PENDING) == 1
    assert store.count_runs(status=RunStatus.FAILED) == 0

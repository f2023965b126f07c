"""Listing runs the way the API and the dashboard ask for them: filters, keyset pages and
counts per status, run against every backend."""

from __future__ import annotations

from typing import Any

import pytest
from store_samples import T0, at, new_run

from tarry.model import CheckpointOutcome, EventWait, RunStatus, RunUpdate
from tarry.store.base import Store


def _suspended(store: Store, run_id: str, kind: str, *, seconds: float,
               event_types: tuple[str, ...] = (), **fields: Any) -> None:
    """Create ``run_id`` (created at T0 + ``seconds``) and suspend it waiting on ``kind``,
    with an event wait for each of ``event_types``."""
    store.create_run(new_run(run_id, created_at=at(seconds), **fields), [])
    store.claim_run(run_id, at(seconds), "w1", at(seconds + 30))
    waits = tuple(EventWait(wait_id=f"step{index}", type=event_type, match_key='["k"]',
                            until=at(3600)) for index, event_type in enumerate(event_types))
    waiting_for = {"kind": kind, "until": "2026-01-01T10:00:00.000Z",
                   "event_type": event_types[0] if event_types else None}
    outcome = store.checkpoint("w1", at(seconds), [RunUpdate(
        run_id=run_id, status=RunStatus.WAITING, state={}, history=[], due_at=at(3600),
        waiting_for=waiting_for, waits=waits)])
    assert outcome == {run_id: CheckpointOutcome.SAVED}


@pytest.fixture
def runs(store: Store) -> Store:
    """Five runs: a finished one, a timer, two event waits (one with two alternatives) and a
    held run, created one second apart in that order."""
    store.create_run(new_run("done", created_at=at(1), status=RunStatus.SUCCEEDED,
                             due_at=None, target="acme/web#1"), [])
    _suspended(store, "nap", "timer", seconds=2, flow="cooling", target="acme/web#2")
    _suspended(store, "ask", "event", seconds=3, event_types=("slack.approval",),
               target="acme/web#2")
    _suspended(store, "either", "event", seconds=4,
               event_types=("email.reply", "portal.reply"))
    store.create_run(new_run("gate", created_at=at(5), status=RunStatus.HELD,
                             waiting_for={"kind": "hold", "until": None}), [])
    return store


def _ids(store: Store, **filters: Any) -> list[str]:
    return [run.id for run in store.list_runs(**filters)]


@pytest.mark.parametrize(("filters", "expected"), [
    ({}, ["gate", "either", "ask", "nap", "done"]),
    ({"target": "acme/web#2"}, ["ask", "nap"]),
    ({"target": "acme/web#2", "flow": "cooling"}, ["nap"]),
    ({"waiting_for": "timer"}, ["nap"]),
    ({"waiting_for": "event"}, ["either", "ask"]),
    ({"waiting_for": "hold"}, ["gate"]),
    ({"waiting_for": "task"}, []),
    ({"waiting_for": "slack.approval"}, ["ask"]),
    ({"waiting_for": "portal.reply"}, ["either"]),
    ({"waiting_for": "never.declared"}, []),
    ({"waiting_for": "event", "status": RunStatus.HELD}, []),
])
def test_list_runs_filters_by_target_and_what_the_run_waits_for(
        runs: Store, filters: dict[str, Any], expected: list[str]) -> None:
    assert _ids(runs, **filters) == expected


def test_list_runs_pages_by_position_so_a_new_run_does_not_shift_the_next_page(
        runs: Store) -> None:
    first = runs.list_runs(limit=2)
    runs.create_run(new_run("newest", created_at=at(9)), [])
    last = first[-1]

    assert [run.id for run in first] == ["gate", "either"]
    assert _ids(runs, after=(last.created_at, last.id), limit=2) == ["ask", "nap"]
    assert _ids(runs, after=(at(1), "done")) == []


def test_list_runs_pages_through_runs_created_at_the_same_instant_by_id(store: Store) -> None:
    for run_id in ("a", "b", "c"):
        store.create_run(new_run(run_id, created_at=T0), [])

    assert _ids(store, limit=2) == ["c", "b"]
    assert _ids(store, after=(T0, "b")) == ["a"]


def test_list_runs_of_every_status_merges_them_newest_first_page_by_page(
        store: Store) -> None:
    # No index orders every run: each status is read on its own and the pages merged.
    created = [("p1", 1, RunStatus.PENDING), ("s1", 2, RunStatus.SUCCEEDED),
               ("h1", 3, RunStatus.HELD), ("p2", 4, RunStatus.PENDING),
               ("f1", 5, RunStatus.FAILED), ("c1", 5, RunStatus.CANCELLED),
               ("s2", 5, RunStatus.SUCCEEDED), ("p3", 6, RunStatus.PENDING)]
    for run_id, seconds, status in created:
        store.create_run(new_run(run_id, created_at=at(seconds), status=status), [])
    pages: list[list[str]] = []
    after = None
    while page := store.list_runs(after=after, limit=3):
        pages.append([run.id for run in page])
        after = (page[-1].created_at, page[-1].id)

    assert pages == [["p3", "s2", "f1"], ["c1", "p2", "h1"], ["s1", "p1"]]


def test_count_runs_per_status_counts_under_the_other_filters(runs: Store) -> None:
    assert runs.count_runs_per_status() == {RunStatus.SUCCEEDED: 1, RunStatus.WAITING: 3,
                                            RunStatus.HELD: 1}
    assert runs.count_runs_per_status(target="acme/web#2") == {RunStatus.WAITING: 2}
    assert runs.count_runs_per_status(waiting_for="email.reply") == {RunStatus.WAITING: 1}
    assert runs.count_runs_per_status(flow="nothing") == {}

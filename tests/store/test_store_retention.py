"""Retention on both stores: exactly what expired is deleted, a run with every row of its
own; never a run that has not ended, its task, or an event a waiting run may still take."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from retention_support import MANIFESTS, START, Scene, event_ids, row_counts, stage

from tarry.config import Retention
from tarry.engine import retention
from tarry.engine.retention import Purged, cutoffs
from tarry.errors import InvalidRequest
from tarry.testing import Harness

KEEP = Retention(runs=timedelta(days=30), events=timedelta(days=7))


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    with Harness(tmp_path, start=START, store_url=store_url, manifests=MANIFESTS) as h:
        yield h


@pytest.fixture
async def scene(harness: Harness) -> Scene:
    return await stage(harness)


def test_what_expired_is_counted_then_deleted_and_nothing_else(
        harness: Harness, scene: Scene, store_url: str) -> None:
    store = harness.engine.store
    expired = cutoffs(KEEP, scene.now)
    before = row_counts(store_url, scene.old_ended)
    assert before["runs"] == len(scene.old_ended)
    assert before["history"] > 0
    assert before["run_journal"] > 0
    assert retention.count(store, expired, scene.now) == Purged(runs=len(scene.old_ended), events=3)
    kept = scene.new_ended + scene.old_waiting
    kept_rows = row_counts(store_url, kept)

    assert retention.purge(store, expired, scene.now, batch=2) == Purged(
        runs=len(scene.old_ended), events=3)

    assert set(row_counts(store_url, scene.old_ended).values()) == {0}
    assert row_counts(store_url, kept) == kept_rows
    assert kept_rows["tasks"] == 1
    assert kept_rows["event_waits"] == 1
    assert event_ids(store_url) == {scene.old_buffered, scene.old_invalid, scene.new_unmatched}
    assert retention.count(store, expired, scene.now) == Purged()


def test_a_batch_deletes_at_most_its_size_earliest_ended_first(
        harness: Harness, scene: Scene, store_url: str) -> None:
    store = harness.engine.store
    assert store.purge_ended_runs(scene.now - timedelta(days=30), 3) == 3
    assert row_counts(store_url, scene.old_ended)["runs"] == len(scene.old_ended) - 3
    assert store.purge_settled_events(scene.now, scene.now, 1) == 1


def test_older_than_overrides_retention_and_off_deletes_nothing(
        harness: Harness, scene: Scene) -> None:
    store = harness.engine.store
    assert retention.count(store, cutoffs(Retention(), scene.now, timedelta(days=41)),
                           scene.now) == Purged()
    assert retention.count(store, cutoffs(Retention(), scene.now, timedelta(days=39)),
                           scene.now) == Purged(runs=len(scene.old_ended), events=3)
    with pytest.raises(InvalidRequest) as refused:
        cutoffs(Retention(), scene.now)
    assert str(refused.value) == (
        'retention is off, so nothing expires: set [retention] runs and events in tarry.toml '
        '(such as runs = "30d"), or give --older-than')


def test_runs_only_retention_keeps_every_event(
        harness: Harness, scene: Scene, store_url: str) -> None:
    kept = event_ids(store_url)
    purged = retention.purge(harness.engine.store,
                             cutoffs(Retention(runs=timedelta(days=1)), scene.now), scene.now)
    assert purged == Purged(runs=len(scene.old_ended), events=0)
    assert event_ids(store_url) == kept

"""A worker's checkpoints on a SQLite file another process writes to: once a write had to wait
for the other's lock, a checkpoint waits for more runs to join it (``CONTENDED_GATHER``), so
the worker takes the file's one write lock fewer times; alone, it commits at once."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_samples import LEASE, T0, new_run, suspend

from tarry.clock import VirtualClock
from tarry.engine import committer as committer_module
from tarry.engine.committer import Committer
from tarry.model import CheckpointOutcome
from tarry.store import open_store
from tarry.store.aio import AsyncStore
from tarry.store.sqlite import SQLiteStore
from tarry.store.sqlite import store as sqlite_store

RUNS = ("r1", "r2", "r3")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SQLiteStore]:
    """A store on a file with three runs claimed by ``w1``; a gathering checkpoint waits for
    two updates, however long that takes."""
    monkeypatch.setattr(committer_module, "CONTENDED_GATHER", 3600.0)
    monkeypatch.setattr(committer_module, "CONTENDED_GATHER_ENOUGH", 2)
    path = tmp_path / "tarry.db"
    open_store(f"sqlite:///{path}").close()
    store = SQLiteStore(path)
    for run_id in RUNS:
        store.create_run(new_run(run_id), [])
    store.claim_due(T0, "w1", T0 + LEASE, 10)
    yield store
    store.close()


def _traced(store: SQLiteStore) -> list[str]:
    """The statements the store's connection runs from now on (filled as it runs them)."""
    statements: list[str] = []
    store._connection.set_trace_callback(statements.append)
    return statements


def _wait_for_the_lock_once(store: SQLiteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the store's next write find the write lock held by another connection, which lets
    it go at the write's first pause."""
    blocker = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN IMMEDIATE")  # released from the store's thread

    def pause(seconds: float) -> None:
        blocker.rollback()
        blocker.close()
        monkeypatch.undo()

    monkeypatch.setattr(sqlite_store.time, "sleep", pause)


async def test_after_a_write_that_waited_the_next_checkpoint_waits_for_company(
        store: SQLiteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    committer = Committer(AsyncStore(store), "w1", VirtualClock(T0))
    _wait_for_the_lock_once(store, monkeypatch)
    assert await committer.submit(suspend("r1", T0 + LEASE)) is CheckpointOutcome.SAVED
    assert store.write_waited
    statements = _traced(store)
    second = asyncio.create_task(committer.submit(suspend("r2", T0 + LEASE)))
    for _ in range(20):
        await asyncio.sleep(0)
    assert not second.done()  # r2 waits for company
    assert "COMMIT" not in statements
    third = await committer.submit(suspend("r3", T0 + LEASE))
    assert (await second, third) == (CheckpointOutcome.SAVED, CheckpointOutcome.SAVED)
    assert statements.count("COMMIT") == 1  # r2 and r3 in one transaction


async def test_a_checkpoint_of_a_store_written_alone_commits_at_once(
        store: SQLiteStore) -> None:
    committer = Committer(AsyncStore(store), "w1", VirtualClock(T0))
    statements = _traced(store)
    assert await asyncio.wait_for(committer.submit(suspend("r1", T0 + LEASE)), 5) \
        is CheckpointOutcome.SAVED
    assert (store.write_waited, statements.count("COMMIT")) == (False, 1)

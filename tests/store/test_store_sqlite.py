"""What only the SQLite store does: its connection settings, locking and error translation."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from store_samples import LEASE, T0, at, new_run, suspend

from tarry.errors import StoreError, StoreUnavailable
from tarry.model import NewEvent
from tarry.store import open_store
from tarry.store.sqlite import SQLiteStore
from tarry.store.sqlite import store as sqlite_store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A migrated SQLite database file."""
    path = tmp_path / "tarry.db"
    open_store(f"sqlite:///{path}").close()
    return path


def _pragma(path: Path, name: str) -> object:
    store = SQLiteStore(path)
    try:
        with store._transaction(write=False) as tx:
            tx.cursor.execute(f"PRAGMA {name}")
            return next(iter(tx.cursor.fetchall()[0].values()))
    finally:
        store.close()


@pytest.mark.parametrize(("pragma", "expected"), [
    ("journal_mode", "wal"),
    ("foreign_keys", 1),
    ("synchronous", 2),  # FULL: an acknowledged write survives a power loss
    ("busy_timeout", 5000),
])
def test_connections_are_configured(db_path: Path, pragma: str, expected: object) -> None:
    assert _pragma(db_path, pragma) == expected


def test_a_write_blocked_by_another_writer_is_unavailable(db_path: Path) -> None:
    blocker = sqlite3.connect(db_path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    store = SQLiteStore(db_path, busy_timeout=0.01)
    try:
        with pytest.raises(StoreUnavailable, match="database is locked") as caught:
            store.create_run(new_run("r1"), [])
        assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
    finally:
        store.close()
        blocker.rollback()
        blocker.close()


def test_a_write_polls_for_the_lock_every_50_us_to_1_ms_until_it_is_free(
        db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # SQLite's own handler would sleep 1, 2, 5, 10 ms ... between attempts: a writer beside
    # another committing back to back kept missing its gaps (p99 34 ms for the lock).
    blocker = sqlite3.connect(db_path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 8:
            blocker.rollback()  # the other writer commits: the lock is free

    store = SQLiteStore(db_path)
    monkeypatch.setattr(sqlite_store.time, "sleep", pause)
    try:
        store.create_run(new_run("r1"), [])
        assert store.get_run("r1").id == "r1"
    finally:
        monkeypatch.undo()
        store.close()
        blocker.close()
    assert pauses == pytest.approx([0.00005, 0.0001, 0.0002, 0.0004, 0.0008, 0.001, 0.001,
                                    0.001])


def test_a_store_notes_whether_its_last_write_waited_for_another_connection(
        db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = sqlite3.connect(db_path, isolation_level=None)
    store = SQLiteStore(db_path)
    try:
        store.create_run(new_run("r1"), [])
        alone = store.write_waited
        blocker.execute("BEGIN IMMEDIATE")
        monkeypatch.setattr(sqlite_store.time, "sleep", lambda seconds: blocker.rollback())
        store.create_run(new_run("r2"), [])  # finds the lock held; its first pause frees it
        beside = store.write_waited
        monkeypatch.undo()
        store.create_run(new_run("r3"), [])
        assert (alone, beside, store.write_waited) == (False, True, False)
    finally:
        store.close()
        blocker.close()


def test_a_write_leaves_the_busy_timeout_of_the_other_statements_as_it_was(
        db_path: Path) -> None:
    store = SQLiteStore(db_path, busy_timeout=2.5)
    try:
        store.create_run(new_run("r1"), [])
        with store._transaction(write=False) as tx:
            tx.cursor.execute("PRAGMA busy_timeout")
            assert tx.cursor.fetchall() == [{"timeout": 2500}]
    finally:
        store.close()


def test_writes_one_after_another_set_the_busy_timeout_once(db_path: Path) -> None:
    store = SQLiteStore(db_path, busy_timeout=2.5)
    statements: list[str] = []
    store._connection.set_trace_callback(statements.append)
    try:
        for run_id in ("r1", "r2", "r3"):
            store.create_run(new_run(run_id), [])
        store.get_run("r1")
        store.create_run(new_run("r4"), [])
    finally:
        store.close()
    assert [s for s in statements if s.startswith("PRAGMA busy_timeout")] == [
        "PRAGMA busy_timeout = 0", "PRAGMA busy_timeout = 2500", "PRAGMA busy_timeout = 0"]


def test_a_write_takes_no_row_locks_its_begin_holds_the_file(db_path: Path) -> None:
    # PostgreSQL locks an event's id and correlation before delivering it; here BEGIN
    # IMMEDIATE already holds the file's write lock, and a lock statement would be wasted.
    store = SQLiteStore(db_path)
    statements: list[str] = []
    try:
        store.create_run(new_run("r1"), [])
        store._connection.set_trace_callback(statements.append)
        store.record_event(NewEvent(id="e1", type="order.paid", data={}, received_at=T0,
                                    match_key='[["order","A1"]]'), T0)
    finally:
        store.close()
    assert statements[0] == "BEGIN IMMEDIATE"
    assert not [s for s in statements if "locked" in s]


def _synchronous_at_each_commit(statements: list[str]) -> list[str]:
    """The ``synchronous`` setting in effect at each COMMIT of a traced connection (FULL, as
    connecting sets it, until a pragma changes it)."""
    setting, at_commits = "FULL", []
    for statement in statements:
        if statement.startswith("PRAGMA synchronous"):
            setting = statement.split("=")[1].strip()
        elif statement == "COMMIT":
            at_commits.append(setting)
    return at_commits


def test_a_claim_commits_without_syncing_the_wal_and_the_writes_around_it_sync_it(
        db_path: Path) -> None:
    store = SQLiteStore(db_path)
    statements: list[str] = []
    store._connection.set_trace_callback(statements.append)
    try:
        store.create_run(new_run("r1"), [])
        assert [record.id for record in store.claim_due(T0, "w1", T0 + LEASE, 10)] == ["r1"]
        store.checkpoint("w1", T0, [suspend("r1", T0 + LEASE)])
    finally:
        store.close()
    assert _synchronous_at_each_commit(statements) == ["FULL", "NORMAL", "FULL"]


def test_stores_opening_a_new_file_at_once_all_open_it(tmp_path: Path) -> None:
    # Connections switching a new file to WAL at the same instant can deadlock on its lock, and
    # SQLite then fails one at once ("database is locked"): seen as a worker that would not
    # start beside another. Each round races four fresh openers; about one in ten used to fail.
    def open_and_close(path: Path, barrier: threading.Barrier, errors: list[Exception]) -> None:
        barrier.wait()
        try:
            open_store(f"sqlite:///{path}").close()
        except StoreUnavailable as error:
            errors.append(error)

    errors: list[Exception] = []
    for round_ in range(50):
        barrier = threading.Barrier(4)
        path = tmp_path / f"fresh-{round_}.db"
        openers = [threading.Thread(target=open_and_close, args=(path, barrier, errors))
                   for _ in range(4)]
        for opener in openers:
            opener.start()
        for opener in openers:
            opener.join()
    assert errors == []


def test_a_store_reads_while_another_connection_writes(db_path: Path) -> None:
    store = SQLiteStore(db_path, busy_timeout=0.01)
    store.create_run(new_run("r1"), [])
    blocker = sqlite3.connect(db_path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        assert store.get_run("r1").id == "r1"
    finally:
        blocker.rollback()
        blocker.close()
        store.close()


def test_driver_errors_become_store_errors_with_the_cause(db_path: Path) -> None:
    store = SQLiteStore(db_path)
    store.create_run(new_run("r1"), [])
    with pytest.raises(StoreError, match=r"UNIQUE constraint failed: runs\.id") as caught:
        store.create_run(new_run("r1"), [])
    assert isinstance(caught.value.__cause__, sqlite3.IntegrityError)
    store.close()


def test_a_closed_store_raises_store_error(db_path: Path) -> None:
    store = SQLiteStore(db_path)
    store.close()
    with pytest.raises(StoreError, match="closed database"):
        store.get_run("r1")


def test_own_commits_move_the_change_token(db_path: Path) -> None:
    store = SQLiteStore(db_path)
    before = store.change_token()
    store.create_run(new_run("r1"), [])
    assert store.change_token() != before
    store.close()


def test_claiming_reads_the_partial_due_index_and_looks_waits_and_tasks_up(
        db_path: Path) -> None:
    store = SQLiteStore(db_path)
    with store._transaction(write=False) as tx:
        tx.cursor.execute("EXPLAIN QUERY PLAN " + store._queries["due_runs"],
                          {"now": 0, "ahead": 50, "limit": 1})
        plan = " ".join(row["detail"] for row in tx.cursor.fetchall())
    store.close()
    assert "SEARCH runs USING INDEX runs_due" in plan
    assert "SEARCH event_waits USING COVERING INDEX sqlite_autoindex_event_waits_1 (run_id=?)" \
        in plan
    assert "SEARCH tasks USING COVERING INDEX tasks_run (run_id=? AND state=?)" in plan


def test_a_selective_journal_read_looks_each_key_up(db_path: Path) -> None:
    store = SQLiteStore(db_path)
    with store._transaction(write=False) as tx:
        tx.cursor.execute("EXPLAIN QUERY PLAN " + store._queries["journal_entries"],
                          {"run_id": "r", "scopes": '[""]', "selective": "", "keys": '["s1"]'})
        plan = " ".join(row["detail"] for row in tx.cursor.fetchall())
    store.close()
    assert "run_journal_lookup (run_id=? AND scope=? AND key=?)" in plan


def test_the_change_hint_moves_when_another_connection_commits(db_path: Path) -> None:
    store, other = SQLiteStore(db_path), SQLiteStore(db_path)
    try:
        hint = store.change_hint()
        assert hint is not None
        before = hint()
        store.list_runs()
        assert hint() == before  # a read writes nothing to the log
        other.create_run(new_run("r1"), [])
        assert hint() != before
    finally:
        store.close()
        other.close()


def test_an_in_memory_store_has_no_change_hint() -> None:
    store = SQLiteStore(":memory:")
    assert store.change_hint() is None
    store.close()


def test_an_in_memory_store_works() -> None:
    store = open_store("sqlite:///:memory:")
    store.create_run(new_run("r1", due_at=at(5)), [])
    assert store.next_due_at() == at(5)
    store.close()

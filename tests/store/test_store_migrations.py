"""Migrations: what is pending, when a database is refused, and the schema snapshots."""

from __future__ import annotations

import sqlite3
import uuid
from importlib.resources import files
from pathlib import Path

import pytest

from tarry.errors import MigrationError, StoreError
from tarry.store.migrations import Migration, load_migrations, pending, require_current
from tarry.store.sqlite import SQLiteStore

AVAILABLE = [Migration(1, "0001_initial", ""), Migration(2, "0002_events", "")]


def test_pending_lists_the_migrations_not_applied_in_order() -> None:
    assert pending(AVAILABLE, []) == AVAILABLE
    assert pending(AVAILABLE, [1]) == AVAILABLE[1:]
    assert pending(AVAILABLE, [1, 2]) == []


def test_pending_refuses_a_database_newer_than_the_code() -> None:
    with pytest.raises(MigrationError) as caught:
        pending(AVAILABLE, [1, 2, 3])
    assert str(caught.value) == ("the database schema is at version 3, newer than this tarry "
                                 "knows (version 2): upgrade tarry or use another database")


def test_require_current_accepts_a_fully_migrated_database() -> None:
    require_current(AVAILABLE, [1, 2])


def test_require_current_refuses_a_database_behind_the_code() -> None:
    with pytest.raises(MigrationError) as caught:
        require_current(AVAILABLE, [1])
    assert str(caught.value) == ("the database schema is at version 1 but this tarry needs "
                                 "version 2: run `tarry migrate`")


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *names: str) -> str:
    package = f"fake_migrations_{uuid.uuid4().hex[:8]}"
    folder = tmp_path / package / "migrations"
    folder.mkdir(parents=True)
    (tmp_path / package / "__init__.py").write_text("")
    for name in names:
        (folder / name).write_text("SELECT 1;")
    monkeypatch.syspath_prepend(str(tmp_path))
    return package


def test_load_migrations_orders_files_by_version(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    package = _package(tmp_path, monkeypatch, "0002_second.sql", "0001_first.sql")
    assert [(m.version, m.name) for m in load_migrations(package)] == [
        (1, "0001_first"), (2, "0002_second")]


def test_load_migrations_refuses_a_misnamed_file(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    package = _package(tmp_path, monkeypatch, "0001_first.sql", "2-second.sql")
    with pytest.raises(ValueError, match=(
            f"^{package}: migration file '2-second.sql' is not NNNN_name.sql$")):
        load_migrations(package)


def test_load_migrations_refuses_a_gap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = _package(tmp_path, monkeypatch, "0001_first.sql", "0003_third.sql")
    with pytest.raises(ValueError, match=(
            rf"^{package}: migration versions must run 1, 2, 3, …; found \[1, 3\]$")):
        load_migrations(package)


# -- the SQLite snapshot ----------------------------------------------------------------------


def _sqlite_schema(path: Path) -> list[tuple[object, ...]]:
    """Tables by their columns and foreign keys; indexes by their normalised SQL."""
    with sqlite3.connect(path) as connection:
        objects = connection.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master "
            "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").fetchall()
        return [
            (kind, name, connection.execute(f"PRAGMA table_xinfo({name})").fetchall(),
             connection.execute(f"PRAGMA foreign_key_list({name})").fetchall())
            if kind == "table" else (kind, name, table, " ".join(sql.split()))
            for kind, name, table, sql in objects
        ]


def test_sqlite_migrations_build_exactly_the_schema_snapshot(tmp_path: Path) -> None:
    migrated = SQLiteStore(tmp_path / "migrated.db")
    migrated.migrate()
    migrated.close()
    with sqlite3.connect(tmp_path / "snapshot.db") as connection:
        connection.executescript(
            files("tarry.store.sqlite").joinpath("schema.sql").read_text(encoding="utf-8"))

    snapshot = _sqlite_schema(tmp_path / "snapshot.db")

    assert snapshot  # the snapshot is not empty
    assert _sqlite_schema(tmp_path / "migrated.db") == snapshot


def test_a_migration_applied_meanwhile_by_another_process_is_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = SQLiteStore(tmp_path / "t.db"), SQLiteStore(tmp_path / "t.db")
    monkeypatch.setattr(second, "_applied_versions", lambda: None)  # it saw an empty database
    assert first.migrate() == [m.name for m in load_migrations("tarry.store.sqlite")]

    assert second.migrate() == []

    first.close()
    second.close()


def test_migrations_apply_all_or_none_so_no_process_sees_a_schema_halfway(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SQLiteStore(tmp_path / "t.db")
    *good, last = load_migrations("tarry.store.sqlite")
    monkeypatch.setattr(store, "_migrations", (*good, Migration(last.version, last.name,
                                                                "CREATE TABLE broken (")))
    with pytest.raises(StoreError):
        store.migrate()
    assert store._applied_versions() is None  # an empty database still, not version 1 of 8
    monkeypatch.undo()
    assert len(store.migrate()) == len(good) + 1
    store.close()

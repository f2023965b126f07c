"""Opening a store from its URL: schemes, paths, and the schema check on open."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tarry.errors import ConfigError, MigrationError, StoreUnavailable
from tarry.store import open_store
from tarry.store.migrations import load_migrations

ALL_MIGRATIONS = [(m.version, m.name) for m in load_migrations("tarry.store.sqlite")]
LATEST = ALL_MIGRATIONS[-1][0]


def _applied(path: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(path) as connection:
        return connection.execute("SELECT version, name FROM schema_migrations").fetchall()


def test_a_relative_sqlite_path_is_relative_to_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    open_store("sqlite:///.tarry/nested/tarry.db").close()
    assert (tmp_path / ".tarry" / "nested" / "tarry.db").is_file()


def test_an_absolute_sqlite_path_takes_four_slashes(tmp_path: Path) -> None:
    open_store(f"sqlite:////{tmp_path.relative_to('/')}/abs/tarry.db").close()
    assert (tmp_path / "abs" / "tarry.db").is_file()


def test_an_empty_database_is_migrated_on_open(tmp_path: Path) -> None:
    open_store(f"sqlite:///{tmp_path}/tarry.db").close()
    assert _applied(tmp_path / "tarry.db") == ALL_MIGRATIONS


def test_opening_a_migrated_database_again_changes_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/tarry.db"
    open_store(url).close()
    store = open_store(url)
    assert store.migrate() == []
    store.close()
    assert _applied(tmp_path / "tarry.db") == ALL_MIGRATIONS


def test_a_database_behind_this_version_is_refused(tmp_path: Path) -> None:
    open_store(f"sqlite:///{tmp_path}/tarry.db").close()
    with sqlite3.connect(tmp_path / "tarry.db") as connection:
        connection.execute("DELETE FROM schema_migrations")
    with pytest.raises(MigrationError, match=(
            rf"^the database schema is at version 0 but this tarry needs version {LATEST}: "
            r"run `tarry migrate`$")):
        open_store(f"sqlite:///{tmp_path}/tarry.db")


def test_a_database_ahead_of_this_version_is_refused(tmp_path: Path) -> None:
    open_store(f"sqlite:///{tmp_path}/tarry.db").close()
    with sqlite3.connect(tmp_path / "tarry.db") as connection:
        connection.execute("INSERT INTO schema_migrations (version, name) VALUES (?, 'x')",
                           (LATEST + 1,))
    with pytest.raises(MigrationError, match=(
            rf"^the database schema is at version {LATEST + 1}, newer than this tarry knows "
            rf"\(version {LATEST}\): upgrade tarry or use another database$")):
        open_store(f"sqlite:///{tmp_path}/tarry.db")


def test_without_the_schema_check_migrate_is_left_to_the_caller(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/tarry.db", check_schema=False)
    assert _applied_or_none(tmp_path / "tarry.db") is None
    assert store.migrate() == [name for _, name in ALL_MIGRATIONS]
    assert store.migrate() == []
    store.close()


def _applied_or_none(path: Path) -> list[tuple[int, str]] | None:
    try:
        return _applied(path)
    except sqlite3.OperationalError:
        return None


@pytest.mark.parametrize(("url", "message"), [
    ("mysql://db/tarry", "unknown store URL scheme 'mysql': "
                         "use sqlite:///path/to/file.db or postgresql://user@host/dbname"),
    ("sqlite3:///tarry.db", "unknown store URL scheme 'sqlite3' (did you mean 'sqlite'?): "
                            "use sqlite:///path/to/file.db or postgresql://user@host/dbname"),
    ("tarry.db", "unknown store URL scheme 'tarry.db': "
                 "use sqlite:///path/to/file.db or postgresql://user@host/dbname"),
    ("sqlite://tarry.db", "a SQLite store URL is sqlite:///relative/path.db or "
                          "sqlite:////absolute/path.db, not 'sqlite://tarry.db'"),
    ("sqlite:///", "a SQLite store URL is sqlite:///relative/path.db or "
                   "sqlite:////absolute/path.db, not 'sqlite:///'"),
])
def test_unusable_urls_are_config_errors(url: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        open_store(url)
    assert str(caught.value) == message


def test_a_sqlite_folder_that_cannot_be_created_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(StoreUnavailable, match="cannot create the folder of the SQLite store"):
        open_store(f"sqlite:///{tmp_path}/file/tarry.db")


def test_a_sqlite_file_that_cannot_be_opened_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "folder.db").mkdir()
    with pytest.raises(StoreUnavailable, match="unable to open database file"):
        open_store(f"sqlite:///{tmp_path}/folder.db")


@pytest.mark.parametrize(("query", "message"), [
    ("pool_size=0", "store URL option pool_size must be a positive integer, not '0'"),
    ("pool_size=two", "store URL option pool_size must be a positive integer, not 'two'"),
    ("pool_timeout=-1",
     "store URL option pool_timeout must be a positive number of seconds, not '-1'"),
    ("pool_timeout=soon",
     "store URL option pool_timeout must be a positive number of seconds, not 'soon'"),
])
def test_bad_postgres_pool_options_are_config_errors(query: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        open_store(f"postgresql://postgres@127.0.0.1:1/tarry?{query}")
    assert str(caught.value) == message


def test_an_unreachable_postgres_server_is_unavailable() -> None:
    with pytest.raises(StoreUnavailable, match=r"^PostgreSQL store unavailable: "):
        open_store("postgresql://postgres@127.0.0.1:1/tarry?pool_timeout=0.2")

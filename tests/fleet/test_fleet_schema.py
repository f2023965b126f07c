"""What a worker does when it meets a database migrated by another version of tarry (an upgrade
rolled out in the wrong order): it refuses to start, exits 1 and says what to do."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from fleet_support import TARRY

from tarry.config import sqlite_path
from tarry.store import open_store
from tarry.store.migrations import load_migrations

pytestmark = pytest.mark.slow

KNOWN = len(load_migrations("tarry.store.sqlite"))


def execute(url: str, statement: str) -> None:
    """Run one statement on the store's database and commit it."""
    if url.startswith("sqlite"):
        connection = sqlite3.connect(str(sqlite_path(url)))
        with connection:
            connection.execute(statement)
        connection.close()
        return
    with psycopg.connect(url) as pg:
        pg.execute(statement.encode())


def start_worker(url: str, folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TARRY_DATABASE": url}
    return subprocess.run([str(TARRY), "worker", "--once"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=30, check=False)


@contextmanager
def ledger_changed(url: str, change: str, undo: str) -> Iterator[None]:
    """The migrations ledger of ``url`` changed for the duration (a pooled test database is
    handed to other tests afterwards, ledger included)."""
    open_store(url).close()
    execute(url, change)
    try:
        yield
    finally:
        execute(url, undo)


def test_a_worker_older_than_the_schema_refuses_to_start(
        store_url: str, tmp_path: Path) -> None:
    newer = f"INSERT INTO schema_migrations (version, name) VALUES ({KNOWN + 1}, 'newer')"
    with ledger_changed(store_url, newer,
                        f"DELETE FROM schema_migrations WHERE version = {KNOWN + 1}"):
        finished = start_worker(store_url, tmp_path)

    assert finished.returncode == 1
    assert finished.stderr == (
        f"error: the database schema is at version {KNOWN + 1}, newer than this tarry knows "
        f"(version {KNOWN}): upgrade tarry or use another database\n")


def test_a_worker_newer_than_the_schema_refuses_to_start_until_migrated(
        store_url: str, tmp_path: Path) -> None:
    last = load_migrations("tarry.store.sqlite")[-1]
    with ledger_changed(store_url, f"DELETE FROM schema_migrations WHERE version = {KNOWN}",
                        f"INSERT INTO schema_migrations (version, name) "
                        f"VALUES ({KNOWN}, '{last.name}')"):
        finished = start_worker(store_url, tmp_path)

    assert finished.returncode == 1
    assert finished.stderr == (
        f"error: the database schema is at version {KNOWN - 1} but this tarry needs version "
        f"{KNOWN}: run `tarry migrate`\n")

"""The upgrade that moves each run's ``created`` entry into its row (migration 0009): a
database written by the release before it reads back every history exactly as it was."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from store_samples import T0, at

from backends import BACKENDS, PostgresServer
from tarry.clock import to_millis
from tarry.model import HistoryEntry
from tarry.store import open_store

RELEASE_8 = 8
"""The last schema version whose history table held every run's ``created`` entry."""

HISTORIES = {
    # A start as every release wrote it: the created entry first, at the run's creation.
    "started": [HistoryEntry(T0, "created", None, {"target": "acme/web", "trigger": "deploy"}),
                HistoryEntry(at(1), "step started", "ask", {})],
    # Anything else stays where it is.
    "created-later": [HistoryEntry(at(5), "created", None, {}),
                      HistoryEntry(at(6), "note", None, {"n": 1})],
    "another-first": [HistoryEntry(T0, "note", None, {}),
                      HistoryEntry(T0, "created", None, {})],
    "bare": [],
}


@pytest.fixture(params=BACKENDS)
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database that no migration has touched."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/tarry.db"
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    with server.database() as url:
        yield url


def _execute(url: str, statement: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as connection:
            return connection.execute(statement, params).fetchall()
    with psycopg.connect(url, autocommit=True) as connection:
        cursor = connection.execute(statement.replace("?", "%s").encode(), params)
        return cursor.fetchall() if cursor.description else []


def _write_as_release_8(url: str) -> None:
    """The runs of HISTORIES as release 8 stored them: every entry a history row."""
    for run_id, entries in HISTORIES.items():
        _execute(url, "INSERT INTO runs (id, flow, flow_digest, status, inputs, state, "
                      "created_at, updated_at) VALUES (?, 'f', 'd', 'waiting', '{}', '{}', ?, ?)",
                 (run_id, to_millis(T0), to_millis(T0)))
        for item in entries:
            _execute(url, "INSERT INTO history (run_id, at, kind, step, data) "
                          "VALUES (?, ?, ?, ?, ?)",
                     (run_id, to_millis(item.at), item.kind, item.step, json.dumps(item.data)))


def test_the_upgrade_reads_back_every_history_as_release_8_wrote_it(empty_url: str) -> None:
    old = open_store(empty_url, check_schema=False)
    old._migrations = old._migrations[:RELEASE_8]  # type: ignore[attr-defined]
    old.migrate()
    old.close()
    _write_as_release_8(empty_url)

    store = open_store(empty_url, check_schema=False)
    assert store.migrate()[:2] == ["0009_created_in_run_row", "0010_listed_per_status"]
    histories = {run_id: store.history(run_id) for run_id in HISTORIES}
    store.close()

    assert histories == HISTORIES
    # Only the start's created entry moved into its row.
    assert _execute(empty_url, "SELECT id, created_data IS NOT NULL FROM runs ORDER BY id") == [
        ("another-first", False), ("bare", False), ("created-later", False), ("started", True)]
    assert _execute(empty_url, "SELECT count(*) FROM history") == [(5,)]

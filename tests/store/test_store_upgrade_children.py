"""The upgrade to child runs (migration 0019), on both stores: a run written before it reads
back with no parent and no children, and a parent's children are found by the new index."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from backends import BACKENDS, PostgresServer
from tarry.clock import to_millis
from tarry.model import HistoryEntry, NewRun, RunStatus
from tarry.store import open_store

RELEASE_18 = 18
"""The migrations a store had before child runs (up to 0018_slots)."""
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(params=BACKENDS)
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database that no migration has touched."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/tarry.db"
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    with server.database() as url:
        yield url


def _run(run_id: str, *, parent: str | None = None) -> NewRun:
    return NewRun(id=run_id, flow="f", flow_digest="d", status=RunStatus.WAITING, inputs={},
                  target=None, created_at=T0, due_at=None, parent_id=parent,
                  parent_step="kid" if parent else None)


def test_a_run_from_before_child_runs_has_no_parent_and_no_children(
        empty_url: str) -> None:
    old = open_store(empty_url, check_schema=False)
    old._migrations = old._migrations[:RELEASE_18]  # type: ignore[attr-defined]
    old.migrate()
    with old._transaction(write=True) as tx:  # type: ignore[attr-defined]
        tx.cursor.execute(
            "INSERT INTO runs (id, flow, flow_digest, status, inputs, state, created_at, "
            "updated_at) VALUES ('before', 'f', 'd', 'waiting', '{}', '{}', "
            f"{to_millis(T0)}, {to_millis(T0)})")
    old.close()

    store = open_store(empty_url, check_schema=False)
    assert store.migrate()[:1] == ["0019_child_runs"]
    store.create_runs([(_run("parent"), [HistoryEntry(T0, "created")]),
                       (_run("child", parent="parent"), [HistoryEntry(T0, "created")])])
    before = store.get_run("before")
    try:
        assert (before.parent_id, store.children("before")) == (None, [])
        assert store.get_run("child").parent_id == "parent"
        assert store.children("parent") == ["child"]
    finally:
        store.close()

"""A store of the release before slots upgrades to them: the one migration it lacks is
applied, and a run it held waiting resumes and ends as before."""

from __future__ import annotations

from pathlib import Path

from tarry.store import open_store
from tarry.store.sqlstore import SqlStore

RELEASE_17 = 17
"""Migrations the release before slots applied (through 0017_pacing)."""


def test_a_release_17_store_gains_the_slot_tables_and_nothing_else(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    old = open_store(url, check_schema=False)
    old._migrations = old._migrations[:RELEASE_17]  # type: ignore[attr-defined]
    old.migrate()
    old.close()
    store = open_store(url, check_schema=False)
    try:
        assert store.migrate()[:1] == ["0018_slots"]
        assert isinstance(store, SqlStore)
        with store._transaction(write=False) as tx:
            tx.cursor.execute("SELECT count(*) AS n FROM slot_holders")
            assert tx.cursor.fetchall()[0]["n"] == 0
    finally:
        store.close()

"""Creating runs, the same statements on every SQL backend: each run's row, its first history
entries and the journal it starts with; and reading runs' journals back.

Every function runs inside the caller's transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tarry.model import HistoryEntry, JournalEntry, NewRun
from tarry.store import rows

if TYPE_CHECKING:
    from tarry.store.sqlstore import Tx

__all__ = ["insert_runs", "journals_of"]


def insert_runs(tx: Tx, runs: Sequence[tuple[NewRun, Sequence[HistoryEntry]]]) -> None:
    """Insert ``runs``, each with its first history entries (the ``created`` one in the run's
    row: ``rows.creation_params``) and its journal."""
    run_params, history = rows.creation_params(runs)
    tx.insert("insert_run", run_params)
    tx.insert("insert_history", history)
    tx.insert("insert_journal", [params for run, _ in runs
                               for params in rows.journal_params(run.id, run.journal)])


def journals_of(tx: Tx, run_ids: Sequence[str]) -> dict[str, list[JournalEntry]]:
    """Every journal entry of each run in ``run_ids``, oldest first (runs with none are
    absent)."""
    grouped: dict[str, list[JournalEntry]] = {}
    for row in tx.all("journal_of_runs", {"ids": json.dumps(list(run_ids))}):
        grouped.setdefault(row["run_id"], []).append(rows.journal_entry(row))
    return grouped

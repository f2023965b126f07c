"""Creating runs, the same statements on every SQL backend: each run's row, its first history
entries and the journal it starts with.

Every function runs inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tarry.model import HistoryEntry, NewRun
from tarry.store import rows

if TYPE_CHECKING:
    from tarry.store.sqlstore import Tx

__all__ = ["insert_runs"]


def insert_runs(tx: Tx, runs: Sequence[tuple[NewRun, Sequence[HistoryEntry]]]) -> None:
    """Insert ``runs``, each with its first history entries (the ``created`` one in the run's
    row: ``rows.creation_params``) and its journal."""
    run_params, history = rows.creation_params(runs)
    tx.insert("insert_run", run_params)
    tx.insert("insert_history", history)
    tx.insert("insert_journal", [params for run, _ in runs
                               for params in rows.journal_params(run.id, run.journal)])

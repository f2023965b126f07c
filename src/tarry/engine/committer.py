"""Group commit of checkpoints: the updates of every run that finished in the same moment share
a transaction.

Runs executing concurrently on one worker submit their updates here; all submissions made before
the event loop comes round are written by one ``Store.checkpoint`` call, awaited through the
async store boundary (:class:`tarry.engine.batching.Batcher`). A wake of ten thousand timers
costs a few hundred transactions, not ten thousand.
"""

from __future__ import annotations

from collections.abc import Sequence

from tarry.clock import Clock
from tarry.engine.batching import Batcher
from tarry.errors import StoreUnavailable
from tarry.model import CheckpointOutcome, RunUpdate
from tarry.store.aio import AsyncStore

__all__ = ["CHECKPOINT_WRITERS", "Committer"]

CHECKPOINT_WRITERS = 4
"""How many checkpoint transactions a worker writes at once, at most (never more than its
store's threads: one on SQLite, whose single writer takes them in turn anyway)."""


class Committer:
    """Batches :class:`RunUpdate` submissions into shared store transactions, one at a
    time."""

    def __init__(self, store: AsyncStore, worker: str, clock: Clock) -> None:
        self.store = store
        self.worker = worker
        self.clock = clock
        self._batcher: Batcher[RunUpdate, CheckpointOutcome] = Batcher(
            self._write_batch, writers=min(store.threads, CHECKPOINT_WRITERS))

    async def submit(self, update: RunUpdate) -> CheckpointOutcome:
        """Queue ``update`` for the next shared transaction and wait for its outcome."""
        return await self._batcher.submit(update)

    async def _write_batch(self, batch: list[RunUpdate]
                           ) -> Sequence[CheckpointOutcome | BaseException]:
        """Write ``batch`` in one transaction; if the store refuses it for a reason other than
        being unavailable, write each update on its own, so that one run's bad update never
        fails (or re-runs) the others committed with it."""
        try:
            outcomes = await self.store.checkpoint(self.worker, self.clock.now(), batch)
        except Exception as exc:
            if len(batch) > 1 and not isinstance(exc, StoreUnavailable):
                return [(await self._write_batch([update]))[0] for update in batch]
            return [exc] * len(batch)
        return [outcomes[update.run_id] for update in batch]

"""Group commit: the updates of every run that finished in the same moment share a transaction.

Runs executing concurrently on one worker submit their updates here; all submissions made before
the event loop comes round are written by one ``Store.checkpoint`` call. A wake of ten thousand
timers then costs a few hundred transactions, not ten thousand.
"""

from __future__ import annotations

import asyncio

from tarry.clock import Clock
from tarry.model import CheckpointOutcome, RunUpdate
from tarry.store.base import Store

__all__ = ["Committer"]


class Committer:
    """Batches :class:`RunUpdate` submissions into shared store transactions."""

    def __init__(self, store: Store, worker: str, clock: Clock) -> None:
        self.store = store
        self.worker = worker
        self.clock = clock
        self._pending: list[tuple[RunUpdate, asyncio.Future[CheckpointOutcome]]] = []
        self._scheduled = False

    async def submit(self, update: RunUpdate) -> CheckpointOutcome:
        """Queue ``update`` for the next shared transaction and wait for its outcome."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[CheckpointOutcome] = loop.create_future()
        self._pending.append((update, future))
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        self._scheduled = False
        batch, self._pending = self._pending, []
        try:
            outcomes = self.store.checkpoint(self.worker, self.clock.now(),
                                             [update for update, _ in batch])
        except Exception as exc:
            for _, future in batch:
                future.set_exception(exc)
            return
        for update, future in batch:
            future.set_result(outcomes[update.run_id])

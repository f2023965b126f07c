"""Group commit: the updates of every run that finished in the same moment share a transaction.

Runs executing concurrently on one worker submit their updates here; all submissions made before
the event loop comes round are written by one ``Store.checkpoint`` call, awaited through the
async store boundary. While that transaction is in progress, new submissions gather for the
next one, so the busier the worker, the larger each batch and the fewer the commits: a wake of
ten thousand timers costs a few hundred transactions, not ten thousand.
"""

from __future__ import annotations

import asyncio

from tarry.clock import Clock
from tarry.errors import StoreUnavailable
from tarry.model import CheckpointOutcome, RunUpdate
from tarry.store.aio import AsyncStore

__all__ = ["Committer"]

_Submission = tuple[RunUpdate, "asyncio.Future[CheckpointOutcome]"]


class Committer:
    """Batches :class:`RunUpdate` submissions into shared store transactions, one at a
    time."""

    def __init__(self, store: AsyncStore, worker: str, clock: Clock) -> None:
        self.store = store
        self.worker = worker
        self.clock = clock
        self._pending: list[_Submission] = []
        self._writer: asyncio.Task[None] | None = None

    async def submit(self, update: RunUpdate) -> CheckpointOutcome:
        """Queue ``update`` for the next shared transaction and wait for its outcome."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[CheckpointOutcome] = loop.create_future()
        self._pending.append((update, future))
        if self._writer is None:
            self._writer = loop.create_task(self._write())
        return await future

    async def _write(self) -> None:
        """Write batches until none is pending; each batch is what was submitted while the
        previous one was being written (or, first, before the loop came round)."""
        try:
            await asyncio.sleep(0)  # let the runs finishing this moment join the first batch
            while self._pending:
                batch, self._pending = self._pending, []
                await self._write_batch(batch)
        finally:
            self._writer = None

    async def _write_batch(self, batch: list[_Submission]) -> None:
        """Write ``batch`` in one transaction; if the store refuses it for a reason other than
        being unavailable, write each update on its own, so that one run's bad update never
        fails (or re-runs) the others committed with it."""
        try:
            outcomes = await self.store.checkpoint(self.worker, self.clock.now(),
                                                   [update for update, _ in batch])
        except asyncio.CancelledError:
            for _, future in batch:
                future.cancel()
            raise
        except Exception as exc:
            if len(batch) > 1 and not isinstance(exc, StoreUnavailable):
                for submission in batch:
                    await self._write_batch([submission])
                return
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for update, future in batch:
            if not future.done():
                future.set_result(outcomes[update.run_id])

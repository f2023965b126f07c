"""Group commit: calls made in the same moment share one store transaction.

Code on the event loop submits an item and awaits its own result; every item submitted before
the loop comes round is written by one call of the batch's writer, and while that call is in
progress new items gather for the next (or, where the store commits several transactions at
once, go out in a second call beside it). So the busier the loop, the larger each batch and
the fewer the commits — the same figure a one-at-a-time caller is bounded by (a durable
commit each) becomes the rate of batches, not of items. The worker's checkpoints
(:class:`tarry.engine.committer.Committer`) and the runs started through ``engine.aio``
are written this way.

A batcher may also be told to let the next batch grow a little before writing it
(:class:`Gather`), when each write costs others something: SQLite's one write lock, taken in
turns with other processes, is held for a commit whatever the batch's size.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Batcher", "Gather"]

Item = TypeVar("Item")
Result = TypeVar("Result")


@dataclass(frozen=True)
class Gather:
    """When a :class:`Batcher` waits for its next batch to grow, and for how long."""

    when: Callable[[], bool]
    """Asked before a batch of fewer than :attr:`enough` items is written: whether to let more
    items join it first."""
    seconds: float
    """How long to wait at most."""
    enough: int
    """How many waiting items end the wait at once."""


class Batcher(Generic[Item, Result]):
    """Writes submitted items in batches with ``write``: a coroutine that takes the batch and
    returns, for each item in order, its result or the exception to raise in its submitter
    (one item's failure is its own).

    Up to ``writers`` batches are written at once (1: one at a time). A store that commits
    several transactions at once (PostgreSQL's pool) syncs them together, so a second batch
    need not wait for the first one's commit; items submitted while every writer is busy
    gather for whichever finishes first. Given ``gather``, a writer about to write fewer than
    ``gather.enough`` items, with ``gather.when()`` true, first waits up to ``gather.seconds``
    for more to join them."""

    def __init__(self, write: Callable[[list[Item]],
                                       Awaitable[Sequence[Result | BaseException]]], *,
                 writers: int = 1, gather: Gather | None = None) -> None:
        if writers < 1:
            raise ValueError("writers must be at least 1")
        self._write_batch = write
        self._writers = writers
        self._gather = gather
        self._pending: list[tuple[Item, asyncio.Future[Result]]] = []
        self._writing: set[asyncio.Task[None]] = set()
        self._gathering: set[asyncio.Event] = set()  # of the writers letting items gather

    async def submit(self, item: Item) -> Result:
        """Queue ``item`` for the next batch and wait for its result."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Result] = loop.create_future()
        self._pending.append((item, future))
        if self._gathering and self._gather is not None \
                and len(self._pending) >= self._gather.enough:
            for enough in self._gathering:
                enough.set()
        if len(self._writing) < self._writers:
            self._writing.add(loop.create_task(self._write()))
        return await future

    @property
    def writing(self) -> bool:
        """Whether a batch is being written (or about to be)."""
        return bool(self._writing)

    async def settled(self) -> None:
        """Return once the batches being written now are written."""
        if self._writing:
            await asyncio.wait(set(self._writing))

    async def _write(self) -> None:
        """Write batches until none is pending; each batch is what was submitted while the
        writers were busy (or, first, before the loop came round)."""
        try:
            await asyncio.sleep(0)  # let the calls made this moment join the first batch
            while self._pending:
                await self._let_gather()
                batch, self._pending = self._pending, []
                await self._settle(batch)
        finally:  # at once: an item submitted from now on starts a writer of its own
            self._writing.discard(asyncio.current_task())

    async def _let_gather(self) -> None:
        """Wait for the next batch to grow, if :class:`Gather` says so."""
        gather = self._gather
        if gather is None or len(self._pending) >= gather.enough or not gather.when():
            return
        enough = asyncio.Event()
        self._gathering.add(enough)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(enough.wait(), gather.seconds)
        finally:
            self._gathering.discard(enough)

    async def _settle(self, batch: list[tuple[Item, asyncio.Future[Result]]]) -> None:
        try:
            results = await self._write_batch([item for item, _ in batch])
        except asyncio.CancelledError:
            for _, future in batch:
                future.cancel()
            raise
        except Exception as exc:  # the writer failed as a whole: every submitter learns why
            results = [exc] * len(batch)
        for (_, future), result in zip(batch, results, strict=True):
            if future.done():
                continue
            if isinstance(result, BaseException):
                future.set_exception(result)
            else:
                future.set_result(result)

"""Group commit of checkpoints: the updates of every run that finished in the same moment share
a transaction.

Runs executing concurrently on one worker submit their updates here; all submissions made before
the event loop comes round are written by one ``Store.checkpoint`` call, awaited through the
async store boundary (:class:`tarry.engine.batching.Batcher`). A wake of ten thousand timers
costs a few hundred transactions, not ten thousand. A running worker also claims its next due
runs in the same transaction (:class:`ClaimAlong`), as many as the batch frees slots, so a
busy worker spends one transaction per batch, not two.

When another process writes to the same SQLite file (a loop of sends or starts beside the
worker), the two take turns at its one write lock, and a commit holds it for its sync however
few runs it carries. There, a batch is let grow for a few milliseconds first
(:data:`CONTENDED_GATHER`), so that the worker holds the lock fewer times per run and leaves it
to the other writer in between, as PostgreSQL's ``commit_delay`` does when other transactions
are active.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from tarry.clock import Clock
from tarry.engine.batching import Batcher, Gather
from tarry.errors import StoreUnavailable
from tarry.model import CheckpointOutcome, InboxEvent, RunRecord, RunUpdate
from tarry.store.aio import AsyncStore

__all__ = ["CHECKPOINT_WRITERS", "CONTENDED_GATHER", "CONTENDED_GATHER_ENOUGH", "ClaimAlong",
           "Committer"]

CHECKPOINT_WRITERS = 4
"""How many checkpoint transactions a worker writes at once, at most (never more than its
store's threads: one on SQLite, whose single writer takes them in turn anyway)."""

CONTENDED_GATHER = 0.008
"""Seconds a checkpoint waits for more runs to join it when the store's last write had to wait
for another connection's (``Store.write_waited``). Each run's checkpoint, and the claim that
goes with it, is then this much later at most; a timer is claimed 50 ms ahead of its instant,
so its wake is not. Measured with events sent back to back beside a worker (3,000 sends,
medians of alternating runs): about 1,400 delivered a second without waiting, 1,560 with
2 ms, 1,650 with 4 ms, 1,800 with 8 ms and 1,850 with 16 ms, where the worker's own work
per run sets the limit."""

CONTENDED_GATHER_ENOUGH = 64
"""How many waiting updates end that wait at once (a batch that large gains little more)."""


@dataclass(frozen=True)
class ClaimAlong:
    """How a running worker claims its next due runs in its checkpoints' transactions."""

    room: Callable[[Sequence[RunUpdate]], int]
    """How many runs to claim beside a batch of updates (0: none)."""
    lease: timedelta
    """How long their leases last."""
    ahead: timedelta
    """How far ahead to claim runs nothing can reach before their instant."""
    take: Callable[[list[tuple[RunRecord, list[InboxEvent]]]], None]
    """Given what was claimed, once its transaction committed."""


class Committer:
    """Batches :class:`RunUpdate` submissions into shared store transactions."""

    def __init__(self, store: AsyncStore, worker: str, clock: Clock) -> None:
        self.store = store
        self.worker = worker
        self.clock = clock
        self.claim_along: ClaimAlong | None = None
        """Set by a running worker: each batch's transaction claims its next runs too."""
        self._batcher: Batcher[RunUpdate, CheckpointOutcome] = Batcher(
            self._write_batch, writers=min(store.threads, CHECKPOINT_WRITERS),
            gather=Gather(when=lambda: store.sync.write_waited, seconds=CONTENDED_GATHER,
                          enough=CONTENDED_GATHER_ENOUGH))

    async def submit(self, update: RunUpdate) -> CheckpointOutcome:
        """Queue ``update`` for the next shared transaction and wait for its outcome."""
        return await self._batcher.submit(update)

    @property
    def claiming(self) -> bool:
        """Whether a transaction being written will claim runs (:attr:`claim_along`)."""
        return self.claim_along is not None and self._batcher.writing

    async def settled(self) -> None:
        """Return once the transactions being written now are committed."""
        await self._batcher.settled()

    async def _write_batch(self, batch: list[RunUpdate], *, alone: bool = False
                           ) -> Sequence[CheckpointOutcome | BaseException]:
        """Write ``batch`` in one transaction; if the store refuses it for a reason other than
        being unavailable, write each update on its own (``alone``: claiming nothing beside
        it), so that one run's bad update never fails (or re-runs) the others committed with
        it."""
        try:
            outcomes = await self._write(batch, claiming=not alone)
        except Exception as exc:
            if len(batch) > 1 and not isinstance(exc, StoreUnavailable):
                return [(await self._write_batch([update], alone=True))[0]
                        for update in batch]
            return [exc] * len(batch)
        return [outcomes[update.run_id] for update in batch]

    async def _write(self, batch: list[RunUpdate], *, claiming: bool
                     ) -> dict[str, CheckpointOutcome]:
        """One transaction: the checkpoint of ``batch``, and the claim :attr:`claim_along`
        asks for, if any."""
        now = self.clock.now()
        along = self.claim_along if claiming else None
        limit = along.room(batch) if along is not None else 0
        if along is None or limit <= 0:
            return await self.store.checkpoint(self.worker, now, batch)
        outcomes, claimed = await self.store.checkpoint_and_claim(
            self.worker, now, batch, lease_until=now + along.lease, limit=limit,
            ahead=now + along.ahead)
        along.take(claimed)
        return outcomes

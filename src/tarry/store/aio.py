"""The async store boundary: every store verb as a coroutine that never blocks the event loop.

A worker, the hold gate, ``Engine.drive`` and the HTTP server share one asyncio loop, so none
of them may call the store directly: a SQLite write can wait seconds for another process's
lock, and a PostgreSQL commit waits for the server's fsync. :class:`AsyncStore` runs each
verb of a :class:`tarry.store.base.Store` on threads of its own and awaits the result:

- **SQLite**: one thread (``Store.concurrency`` is 1), the store's single writer; SQLite
  serialises writes anyway, and one thread keeps them in submission order.
- **PostgreSQL**: as many threads as the connection pool has connections (the URL's
  ``pool_size``, 8 by default: a worker and a server side by side), so a slow commit holds
  one thread and one connection, never the loop.

There is one definition of each operation: the verb of the synchronous store (the CLI and
the test harness call it directly; this class only moves the call onto its threads). The
async methods are derived from the :class:`Store` protocol, so their signatures follow it.

Entry points:

- ``AsyncStore(store)``: the boundary over ``store``; ``await astore.claim_due(...)`` and
  every other verb; ``await astore.call(function, *args)`` runs any synchronous function
  that uses the store (a whole ``Engine.start``, say) on the same threads;
  ``astore.close()`` stops the threads (the store itself stays open).
- ``await astore.wait_for_change(token, timeout)``: sleep until the store's change token
  moves or ``timeout`` passes (push on PostgreSQL, a cheap poll on SQLite).
- :class:`tarry.engine.runtime.AsyncEngine` (``engine.aio``): the engine's own operations
  (start, get, list, cancel, send, events, redeliver, discard, held) awaited the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from tarry.store.base import Store

__all__ = ["AsyncStore", "Offloading", "offloaded"]

P = ParamSpec("P")
R = TypeVar("R")

_CHANGE_POLL_SECONDS = 0.02
"""How often a store without push notifications is asked whether something changed."""

_HINT_POLL_SECONDS = 0.002
"""How often a store's change hint (a look at a file, on the loop) is probed meanwhile."""

_SETTLE_SECONDS = 0.02
"""How long the store is asked every 2 ms after its change hint moved: a commit reaches the
file (SQLite: its write-ahead log) before it is visible, while it syncs, and a look in between
sees nothing new although the file will not move again."""


class Offloading(Protocol):
    """An object whose coroutine methods run the same-named methods of ``sync`` elsewhere."""

    @property
    def sync(self) -> Any:
        """The object whose methods run."""
        ...

    def offload(self, call: Callable[[], R]) -> Awaitable[R]:
        """Run ``call`` off the event loop; await its result."""
        ...


Owner = TypeVar("Owner", bound=Offloading)


def offloaded(method: Callable[Concatenate[Any, P], R]
              ) -> Callable[Concatenate[Owner, P], Coroutine[Any, Any, R]]:
    """The coroutine method that runs ``method`` (by name, on the owner's ``sync`` object)
    through the owner's ``offload``: one definition of the operation, awaited."""
    name = method.__name__

    async def call(self: Owner, /, *args: P.args, **kwargs: P.kwargs) -> R:
        function: Callable[..., R] = getattr(self.sync, name)
        return await self.offload(functools.partial(function, *args, **kwargs))

    call.__name__ = name
    call.__doc__ = method.__doc__
    return call


class AsyncStore:
    """The verbs of ``store`` as coroutines, each run on the boundary's own threads.

    ``threads`` defaults to ``store.concurrency`` (1 for SQLite, the pool size for
    PostgreSQL).
    """

    def __init__(self, store: Store, *, threads: int | None = None) -> None:
        self._store = store
        self.threads = threads or store.concurrency
        self._executor = ThreadPoolExecutor(max_workers=self.threads,
                                            thread_name_prefix="tarry-store")
        self._waiters: set[asyncio.Future[None]] = set()
        self._waiters_lock = threading.Lock()
        self._pushes: bool | None = None  # whether the store pushes changes (asked once)

    @property
    def sync(self) -> Store:
        """The synchronous store whose verbs these are."""
        return self._store

    def offload(self, call: Callable[[], R]) -> Awaitable[R]:
        """Run ``call`` (a function that uses the store) on the boundary's threads; await
        its result (its exception, if it raises)."""
        return asyncio.get_running_loop().run_in_executor(self._executor, call)

    async def call(self, function: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
        """Run ``function(*args, **kwargs)`` on the boundary's threads and await its result."""
        return await self.offload(functools.partial(function, *args, **kwargs))

    async def wait_for_change(self, token: object, timeout: float) -> object:
        """Sleep until the store's change token differs from ``token`` or ``timeout``
        seconds pass; the token then. A store that pushes (PostgreSQL) wakes the sleeper
        as its notification arrives; another is asked every 20 ms, and as soon as its change
        hint moves (SQLite: its write-ahead log, looked at every 2 ms)."""
        if self._pushes is None:
            self._pushes = self._store.subscribe(self._changed)
        if not self._pushes:
            return await self._poll_for_change(token, timeout)
        future = asyncio.get_running_loop().create_future()
        with self._waiters_lock:
            self._waiters.add(future)
        try:
            current = await self.change_token()
            if current == token:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(future, timeout)
                current = await self.change_token()
            return current
        finally:
            with self._waiters_lock:
                self._waiters.discard(future)

    async def _poll_for_change(self, token: object, timeout: float) -> object:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        hint = self._store.change_hint()
        settling_until = 0.0
        while True:
            seen = hint() if hint else None  # before the token: a commit between moves it
            current = await self.change_token()
            now = loop.time()
            if current != token or now >= deadline:
                return current
            if now < settling_until:  # the hint moved: the commit may not be visible yet
                await asyncio.sleep(min(_HINT_POLL_SECONDS, deadline - now))
            elif await _sleep_until_moved(hint, seen, min(deadline, now + _CHANGE_POLL_SECONDS)):
                settling_until = loop.time() + _SETTLE_SECONDS

    def _changed(self) -> None:
        """The store's push (on its listening thread): wake every sleeper on its loop."""
        with self._waiters_lock:
            waiters = list(self._waiters)
        for future in waiters:
            future.get_loop().call_soon_threadsafe(_settle, future)

    def close(self) -> None:
        """Stop the threads once the calls in progress finish (the store stays open)."""
        self._executor.shutdown(wait=True)

    save_flow = offloaded(Store.save_flow)
    flow_source = offloaded(Store.flow_source)
    create_run = offloaded(Store.create_run)
    create_runs = offloaded(Store.create_runs)
    claim_due = offloaded(Store.claim_due)
    claim_due_with_inbox = offloaded(Store.claim_due_with_inbox)
    claim_run = offloaded(Store.claim_run)
    renew_leases = offloaded(Store.renew_leases)
    count_recovery = offloaded(Store.count_recovery)
    checkpoint = offloaded(Store.checkpoint)
    checkpoint_and_claim = offloaded(Store.checkpoint_and_claim)
    read_journal = offloaded(Store.read_journal)
    journals = offloaded(Store.journals)
    cancel = offloaded(Store.cancel)
    retry_runs = offloaded(Store.retry_runs)
    move_run = offloaded(Store.move_run)
    reruns = offloaded(Store.reruns)
    children = offloaded(Store.children)
    continued_as = offloaded(Store.continued_as)
    create_batch = offloaded(Store.create_batch)
    count_batch = offloaded(Store.count_batch)
    get_batch = offloaded(Store.get_batch)
    unfinished_batches = offloaded(Store.unfinished_batches)
    work_batch = offloaded(Store.work_batch)
    get_run = offloaded(Store.get_run)
    history = offloaded(Store.history)
    list_runs = offloaded(Store.list_runs)
    count_runs_per_status = offloaded(Store.count_runs_per_status)
    count_runs_per_step = offloaded(Store.count_runs_per_step)
    next_due_at = offloaded(Store.next_due_at)
    count_runs = offloaded(Store.count_runs)
    run_ids_starting = offloaded(Store.run_ids_starting)
    purge_ended_runs = offloaded(Store.purge_ended_runs)
    count_ended_runs = offloaded(Store.count_ended_runs)
    purge_settled_events = offloaded(Store.purge_settled_events)
    count_settled_events = offloaded(Store.count_settled_events)
    create_held_run = offloaded(Store.create_held_run)
    acquire_check_slot = offloaded(Store.acquire_check_slot)
    release_check_slot = offloaded(Store.release_check_slot)
    take_slot = offloaded(Store.take_slot)
    give_slot_back = offloaded(Store.give_slot_back)
    slot_view = offloaded(Store.slot_view)
    record_event = offloaded(Store.record_event)
    record_events = offloaded(Store.record_events)
    inbox = offloaded(Store.inbox)
    list_events = offloaded(Store.list_events)
    count_inbox_events = offloaded(Store.count_inbox_events)
    get_event = offloaded(Store.get_event)
    redeliver = offloaded(Store.redeliver)
    discard = offloaded(Store.discard)
    get_task = offloaded(Store.get_task)
    list_tasks = offloaded(Store.list_tasks)
    complete_task = offloaded(Store.complete_task)
    task_ids_starting = offloaded(Store.task_ids_starting)
    append_history = offloaded(Store.append_history)
    reserve_idempotency_key = offloaded(Store.reserve_idempotency_key)
    change_token = offloaded(Store.change_token)
    sync_schedules = offloaded(Store.sync_schedules)
    due_schedules = offloaded(Store.due_schedules)
    fire_schedule = offloaded(Store.fire_schedule)
    take_throttle_turn = offloaded(Store.take_throttle_turn)
    pending_debounces = offloaded(Store.pending_debounces)


async def _sleep_until_moved(hint: Callable[[], object] | None, seen: object,
                             until: float) -> bool:
    """Sleep until ``until`` (the loop's time) or, sooner, until ``hint`` moves from ``seen``;
    whether it moved."""
    loop = asyncio.get_running_loop()
    if hint is None:
        await asyncio.sleep(max(until - loop.time(), 0))
        return False
    while loop.time() < until:
        await asyncio.sleep(min(_HINT_POLL_SECONDS, until - loop.time()))
        if hint() != seen:
            return True
    return False


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)

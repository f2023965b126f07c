"""The event loop tarry's processes run on: asyncio's, with timers that fire on time.

On Linux asyncio waits in ``epoll_wait``, which counts whole milliseconds: Python rounds a
loop timer's timeout up to the next one, so a timer fires up to a millisecond late, 0.7 ms at
the median and 2 ms at the 99th percentile on a quiet machine. A worker waking a run at its
instant would carry that lateness into every wake. :func:`new_event_loop` waits with
microsecond precision instead: it asks ``select`` to wait on the epoll descriptor itself
(readable as soon as anything registered is), then collects the ready events from epoll
without waiting. epoll still watches every descriptor, however many; only the wait changes.
Elsewhere (macOS's kqueue takes nanoseconds; Windows) it is asyncio's own loop.

``tarry worker``, ``tarry serve`` and ``tarry run`` use it. A program that runs a worker
on its own loop (``await engine.worker().run(stop)``) gets the same precision by running
it with :func:`run`, or by creating its loop with :func:`new_event_loop`.
"""

from __future__ import annotations

import asyncio
import select
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["new_event_loop", "run"]

T = TypeVar("T")


if hasattr(selectors, "EpollSelector"):
    class _PreciseEpollSelector(selectors.EpollSelector):
        """epoll, waiting to the microsecond (module docstring)."""

        def __init__(self) -> None:
            super().__init__()
            self._select_reaches = True
            """False once ``select`` refused the epoll descriptor (numbered beyond its reach,
            1024): epoll then waits itself, in whole milliseconds."""

        def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
            if timeout is not None and timeout > 0 and self._select_reaches:
                try:
                    select.select([self.fileno()], [], [], timeout)
                    timeout = 0
                except ValueError:
                    self._select_reaches = False
            return super().select(timeout)

    _SELECTOR: type[selectors.BaseSelector] | None = _PreciseEpollSelector
else:  # pragma: no cover - no epoll (not Linux): asyncio's own loop waits precisely
    _SELECTOR = None


def new_event_loop() -> asyncio.AbstractEventLoop:
    """An asyncio event loop whose timers fire within microseconds of their instant."""
    if _SELECTOR is None:  # pragma: no cover - not Linux
        return asyncio.new_event_loop()
    return asyncio.SelectorEventLoop(_SELECTOR())


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on a loop from :func:`new_event_loop`."""
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(main)

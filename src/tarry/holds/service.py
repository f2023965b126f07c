"""What holds need at run time, in one object an engine owns: :class:`Holds`."""

from __future__ import annotations

import os
import random
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path

from tarry.clock import Clock
from tarry.config import Limits
from tarry.holds.checks import CheckRunner, check_environment
from tarry.store.aio import AsyncStore
from tarry.store.base import Store

__all__ = ["Holds"]

_SLOT_MARGIN = timedelta(seconds=5)
"""A slot's lease outlasts the longest its checks can take by this much."""


class Holds:
    """The declared checks, the hold limits, the check runner, the store (fleet-wide check
    slots and supersede markers), the clock, and the randomness of the cadence's jitter.

    ``store`` serves starts (admission, called off the event loop); ``aio``, the async
    boundary over the same store (a new one by default), serves the gate and the ``check``
    action on the worker's loop.

    ``runner`` defaults to one with the limits' check timeout; ``rng`` to a fresh generator
    (tests pass a seeded one, or one whose ``random()`` is fixed, to pin the jitter).
    """

    def __init__(self, store: Store, clock: Clock, *, checks: Mapping[str, Path] | None = None,
                 limits: Limits | None = None, runner: CheckRunner | None = None,
                 rng: random.Random | None = None, aio: AsyncStore | None = None) -> None:
        self.store = store
        self.aio = aio or AsyncStore(store)
        self.clock = clock
        self.checks = dict(checks or {})
        self.limits = limits or Limits()
        self.runner = runner or CheckRunner(
            timeout=self.limits.check_timeout,
            environment=check_environment(os.environ, self.limits.check_env))
        self.rng = rng or random.Random()

    async def acquire_slot(self, holder: str, now: datetime, checks: int = 1) -> bool:
        """Take a fleet-wide check slot for ``holder``, leased for as long as ``checks``
        checks can take one after another; whether one was free."""
        longest = (self.runner.timeout + self.runner.grace) * checks + _SLOT_MARGIN
        return await self.aio.acquire_check_slot(holder, now, now + longest,
                                                 self.limits.check_slots)

    async def release_slot(self, holder: str) -> None:
        """Give the slot of ``holder`` back."""
        await self.aio.release_check_slot(holder)

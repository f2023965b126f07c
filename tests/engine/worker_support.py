"""Helpers for the tests of a worker running on the real clock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def until(condition: Callable[[], bool]) -> None:
    """Let the worker go on until ``condition`` holds (the cap only stops a broken test)."""
    for _ in range(1_000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the condition never held")

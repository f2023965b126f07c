"""The one seam between the server's event loop and the engine's blocking calls.

Every route reaches the engine and its store through :func:`off_loop`, so a slow store (a
write lock held by another process, a PostgreSQL commit) never stops the loop that serves
other requests and runs the in-process worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["off_loop"]

_P = ParamSpec("_P")
_T = TypeVar("_T")


async def off_loop(call: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """The result of ``call(*args, **kwargs)``, computed on a worker thread."""
    return await asyncio.to_thread(call, *args, **kwargs)

"""The one seam between the server's event loop and the engine's blocking calls.

Every route reaches the engine and its store through :func:`off_loop`, which runs the call
on the engine's async store boundary (:class:`tarry.store.aio.AsyncStore`): the same threads
the in-process worker's store calls use (SQLite: its single writer), so a slow store never
stops the loop that serves other requests and runs the worker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

from tarry.engine.runtime import Engine

__all__ = ["off_loop"]

_P = ParamSpec("_P")
_T = TypeVar("_T")


async def off_loop(engine: Engine, call: Callable[_P, _T], /, *args: _P.args,
                   **kwargs: _P.kwargs) -> _T:
    """The result of ``call(*args, **kwargs)`` (a function using ``engine``), computed on
    the engine's store threads."""
    return await engine.async_store.call(call, *args, **kwargs)

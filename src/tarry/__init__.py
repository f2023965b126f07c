"""tarry: a durable workflow engine whose core competence is waiting.

The Python API::

    from tarry import App, Context, WaitStrategy

    app = App()

    @app.flow("settle-order")
    async def settle_order(ctx: Context, order_id: str) -> str:
        await ctx.step("reserve", reserve_stock, order_id)
        await ctx.wait("cooling-off", "2d")
        ...

Start runs and send events over HTTP, from services without access to the store, with
:class:`Client` (or :class:`AsyncClient`) against ``tarry serve``.

Everything else (the engine, the store, the command line) lives in subpackages; testing
tools are in :mod:`tarry.testing`.
"""

from typing import TYPE_CHECKING, Any

from tarry.errors import (
    ChildFailedError,
    NondeterminismError,
    SerializationError,
    StepError,
    TarryError,
    WaitForConditionError,
)
from tarry.sdk.app import App
from tarry.sdk.conditions import CheckContext
from tarry.sdk.context import ChildResult, Context, EventResult, TaskResult
from tarry.sdk.serializers import JsonSerializer, Serializer
from tarry.sdk.strategies import Decision, Jitter, WaitStrategy

if TYPE_CHECKING:
    from tarry.client import ApiError, AsyncClient, Client

_CLIENT_NAMES = frozenset({"ApiError", "AsyncClient", "Client"})
"""Imported on first use: the HTTP client (httpx, and through it click, rich and pygments
where they are installed) is about 7 MiB of memory and 70 ms of start-up that a worker, or a
program that never talks to ``tarry serve``, does not need."""


def __getattr__(name: str) -> Any:
    """The HTTP client's names, imported when first asked for."""
    if name in _CLIENT_NAMES:
        from tarry import client  # noqa: PLC0415 - the point of this function

        return getattr(client, name)
    raise AttributeError(f"module 'tarry' has no attribute {name!r}")

__all__ = [
    "ApiError",
    "App",
    "AsyncClient",
    "CheckContext",
    "ChildFailedError",
    "ChildResult",
    "Client",
    "Context",
    "Decision",
    "EventResult",
    "Jitter",
    "JsonSerializer",
    "NondeterminismError",
    "SerializationError",
    "Serializer",
    "StepError",
    "TarryError",
    "TaskResult",
    "WaitForConditionError",
    "WaitStrategy",
]

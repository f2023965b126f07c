"""tarry: a durable workflow engine whose core competence is waiting.

The Python API (SPEC 6)::

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

from tarry.client import ApiError, AsyncClient, Client
from tarry.errors import (
    NondeterminismError,
    SerializationError,
    StepError,
    TarryError,
    WaitForConditionError,
)
from tarry.sdk.app import App
from tarry.sdk.conditions import CheckContext
from tarry.sdk.context import Context, EventResult, TaskResult
from tarry.sdk.serializers import JsonSerializer, Serializer
from tarry.sdk.strategies import Decision, Jitter, WaitStrategy

__all__ = [
    "ApiError",
    "App",
    "AsyncClient",
    "CheckContext",
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

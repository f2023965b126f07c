"""Helpers for the tests of a worker running on the real clock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from tarry.actions import ActionRegistry
from tarry.clock import SystemClock
from tarry.engine.builtins import register_builtins
from tarry.engine.catalog import FlowCatalog
from tarry.engine.runtime import Engine
from tarry.language.manifests import parse_manifests
from tarry.store import open_store


def real_clock_engine(folder: Path, store_url: str, manifests: str | None = None) -> Engine:
    """An engine on the real clock over ``store_url``, with the built-in actions, flows looked
    up in ``folder`` and, given, the event manifests ``manifests`` (YAML)."""
    registry = ActionRegistry()
    register_builtins(registry)
    store = open_store(store_url)
    return Engine(store, FlowCatalog(folder, store, registry.names()), registry, SystemClock(),
                  None if manifests is None else parse_manifests(manifests, "events.yaml"))


async def until(condition: Callable[[], bool]) -> None:
    """Let the worker go on until ``condition`` holds (the cap only stops a broken test)."""
    for _ in range(1_000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the condition never held")

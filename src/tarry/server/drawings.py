"""A flow's drawing with its runs, as the API and the dashboard serve it.

A flow is looked up by its name only (never a path: a request cannot name a file), and its
runs are counted per step by the store (one index read), so a flow's page costs the same with
ten runs waiting as with a million.
"""

from __future__ import annotations

from urllib.parse import urlencode

from tarry.engine.catalog import PROGRAM_PREFIX
from tarry.engine.runtime import Engine
from tarry.graph import Counts, Diagram, diagram_of, diagram_of_operations
from tarry.language.model import Flow
from tarry.server.calls import off_loop

__all__ = ["flow_counts", "flow_named", "runs_link"]

_SAMPLED = 50
"""How many of a Python flow's latest runs its drawing is made from."""


async def flow_named(engine: Engine, name: str) -> tuple[Flow, Diagram]:
    """The flow called ``name`` (``FlowNotFound`` otherwise) and its drawing: a YAML flow's
    steps, or the operations a Python flow's latest runs recorded."""
    flow = await off_loop(engine, engine.catalog.find_named, name)
    if not flow.source.startswith(PROGRAM_PREFIX):
        return flow, diagram_of(flow)
    records = await engine.async_store.list_runs(flow=flow.name, limit=_SAMPLED)
    journals = await engine.async_store.journals([record.id for record in records])
    return flow, diagram_of_operations(
        flow.name, flow.description,
        [(journals.get(record.id, []), record.waiting_for) for record in records])


async def flow_counts(engine: Engine, flow: str) -> Counts:
    """How many of ``flow``'s runs are at each step now, by status."""
    found = await engine.async_store.count_runs_per_step(flow)
    return {step: {status.value: count for status, count in by_status.items()}
            for step, by_status in found.items()}


def runs_link(flow: str, node: str | None, status: str) -> str:
    """The dashboard's list of ``flow``'s runs with ``status`` at step ``node`` (None: at no
    step, as held runs)."""
    query = {"flow": flow, "status": status, **({"at_step": node} if node else {})}
    return f"/runs?{urlencode(query)}"

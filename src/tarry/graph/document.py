"""A diagram as JSON (``GET /v1/flows/{name}/graph``): its regions and nodes nested as they
are drawn, each node with the count of runs at it now by status."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tarry.graph.diagram import Diagram, Node, Region

__all__ = ["Counts", "diagram_document"]

Counts = Mapping[str | None, Mapping[str, int]]
"""Runs per node id (None: at no step yet, as a held run), per status."""


def diagram_document(diagram: Diagram, counts: Counts) -> dict[str, Any]:
    """The JSON form of ``diagram`` with ``counts`` on its nodes (and on its start)."""
    return {"flow": diagram.flow, "description": diagram.description,
            "start": {"gates": list(diagram.start), "counts": dict(counts.get(None, {}))},
            "steps": _region(diagram.body, counts)}


def _region(region: Region, counts: Counts) -> dict[str, Any]:
    return {"kind": region.kind, "title": region.title,
            "nodes": [_node(node, counts) for node in region.nodes],
            "recover": None if region.recover is None else _region(region.recover, counts)}


def _node(node: Node, counts: Counts) -> dict[str, Any]:
    return {"id": node.id, "step": node.step, "kind": node.kind, "label": node.label,
            "notes": list(node.notes), "wait": node.wait, "exit": node.exit,
            "conditional": node.conditional, "ends": node.ends,
            "counts": dict(counts.get(node.id, {})),
            "regions": [_region(inner, counts) for inner in node.regions]}

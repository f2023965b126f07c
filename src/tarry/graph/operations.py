"""A Python flow drawn from what its runs recorded.

A Python flow's steps exist only as its code runs, so its drawing is the sequence of
operations its runs went through: each finished operation of their journals and the one each
waits at now, in the order they first met them, an operation's place without loop or branch
indices (``fan[2].charge`` → ``fan.charge``). ``now`` and ``random`` are recordings, not
steps, and are left out, as are patch markers (kind ``patch``, what ``ctx.patched`` records).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tarry.graph.diagram import Diagram, Node, NodeKind, Region, WaitKind
from tarry.model import JournalEntry, step_node
from tarry.values import load_json

__all__ = ["Recorded", "diagram_of_operations"]

Recorded = tuple[Sequence[JournalEntry], Mapping[str, Any] | None]
"""One run's journal and its ``waiting_for`` (None when it waits for nothing)."""

_OPERATIONS = "op"
"""The journal scope of a Python flow's finished operations."""

_DRAWN: dict[str, tuple[NodeKind, WaitKind | None, str]] = {
    "step": ("action", None, "step"),
    "wait": ("wait", "timer", "timer"),
    "wait_for_event": ("wait_for", "event", "event"),
    "wait_for_condition": ("repeat", "poll", "poll until a condition"),
    "ask": ("ask", "task", "task for a person"),
    "call": ("call", "child", "child run"),
    "parallel": ("group", None, "parallel branches"),
    "map": ("for_each", None, "a branch per item"),
}
"""Operation kind → how it is drawn: its node's kind, what it waits for, its label."""

_WAITED = {"timer": "wait", "event": "wait_for_event", "poll": "wait_for_condition",
           "task": "ask", "child": "call"}
"""``waiting_for.kind`` → the operation kind a run waits in."""


def diagram_of_operations(flow: str, description: str,
                          runs: Iterable[Recorded]) -> Diagram:
    """The drawing of Python flow ``flow`` from its ``runs``' journals and waits."""
    seen: dict[str, str] = {}
    for journal, waiting in runs:
        for node, kind in _operations(journal, waiting):
            seen.setdefault(node, kind)
    nodes = tuple(_node(node, kind) for node, kind in seen.items() if kind in _DRAWN)
    return Diagram(flow=flow, description=description,
                   start=("Python flow: the operations its runs recorded",),
                   body=Region("flow", "", nodes))


def _operations(journal: Sequence[JournalEntry],
                waiting: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    found = []
    for entry in journal:
        if entry.scope != _OPERATIONS:
            continue
        value = load_json(entry.value) if isinstance(entry.value, str) else entry.value
        if isinstance(value, dict) and isinstance(value.get("kind"), str):
            found.append((step_node(entry.key), value["kind"]))
    if waiting and isinstance(waiting.get("step"), str):
        kind = _WAITED.get(str(waiting.get("kind")))
        if kind is not None:
            found.append((step_node(waiting["step"]), kind))
    return found


def _node(node: str, kind: str) -> Node:
    drawn, wait, label = _DRAWN[kind]
    step = node.rsplit(".", 1)[-1]
    return Node(id=node, step=step, kind=drawn, label=label, wait=wait)

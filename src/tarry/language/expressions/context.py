"""What an evaluation can see: the caller's context and the state of one render."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tarry.errors import ExpressionError
from tarry.language.expressions.limits import MAX_WORK

__all__ = ["Env", "EvalContext"]

_UNNESTED = frozenset({int, float, bool, type(None)})
"""Item types a container's length already pays for."""


@dataclass(frozen=True)
class EvalContext:
    """The engine's side of an evaluation.

    ``now`` is the aware UTC instant ``now()`` returns (taken from the engine's clock, never
    read here); ``timezone`` is the flow's IANA zone, used to read zone-less instants.
    """

    now: datetime
    timezone: str | None = None


class Env:
    """One render in progress: the names in scope, the context and the work spent so far."""

    __slots__ = ("ctx", "scope", "work")

    def __init__(self, scope: Mapping[str, Any], ctx: EvalContext) -> None:
        self.scope = scope
        self.ctx = ctx
        self.work = 0

    def charge(self, units: int) -> None:
        """Spend ``units`` of the work budget; refuse when it runs out."""
        self.work += units
        if self.work > MAX_WORK:
            raise ExpressionError(f"expression does too much work (more than {MAX_WORK:,} "
                                  "steps)")

    def charge_value(self, value: Any) -> None:
        """Spend a unit per item of ``value`` and per character of its strings: what writing
        it out (as JSON, into text, into the run's bindings) costs. A list repeated into
        itself (``[[1] * 100000] * 100000``) is cheap to build but not to write; the walk
        stops at the first unit over the budget, so it costs at most the budget. A string
        alone costs one unit: building it was charged, and it is bounded in length."""
        if isinstance(value, str):
            self.charge(1)
            return
        stack: list[Any] = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                self.charge(len(node) + 1)
            elif isinstance(node, Mapping):
                self.charge(len(node) + 1)
                stack.extend(node.keys())
                _push_nested(stack, node.values())
            elif isinstance(node, list | tuple):
                self.charge(len(node) + 1)
                _push_nested(stack, node)
            else:
                self.charge(1)


def _push_nested(stack: list[Any], items: Collection[Any]) -> None:
    """Push the items that cost more than the unit their container's length paid for (a
    list of numbers is paid for by its length alone, at C speed)."""
    if not set(map(type, items)) <= _UNNESTED:
        stack.extend(items)

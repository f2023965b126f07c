"""What an evaluation can see: the caller's context and the state of one render."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tarry.errors import ExpressionError
from tarry.language.expressions.limits import CHARS_PER_UNIT, ITEM_WORK, MAX_WORK, STEP_WORK

__all__ = ["Env", "EvalContext", "WorkMeter"]

_UNNESTED = frozenset({int, float, bool, type(None)})
"""Item types a container's length already pays for."""


class WorkMeter:
    """The work units the renders of one walk spent since the walk last let other runs go
    on (:meth:`take`): a run that renders many expressions between its steps is paced by
    what they cost, not only by their number."""

    __slots__ = ("spent",)

    def __init__(self) -> None:
        self.spent = 0

    def take(self, slice_: int) -> bool:
        """Whether at least ``slice_`` units were spent since the last time it said so."""
        if self.spent < slice_:
            return False
        self.spent = 0
        return True


@dataclass(frozen=True)
class EvalContext:
    """The engine's side of an evaluation.

    ``now`` is the aware UTC instant ``now()`` returns (taken from the engine's clock, never
    read here); ``timezone`` is the flow's IANA zone, used to read zone-less instants;
    ``meter``, given, adds up the work of every render.
    """

    now: datetime
    timezone: str | None = None
    meter: WorkMeter | None = None


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
                                  "units)")

    def charge_text(self, length: int) -> None:
        """Spend what building, copying, scanning or writing ``length`` characters costs."""
        self.charge(length // CHARS_PER_UNIT + 1)

    def charge_value(self, value: Any) -> None:
        """Spend a unit per flat item of ``value`` and per character of its strings, and a
        step per item visited: what writing it out (as JSON, into text, into the run's
        bindings) costs. A list repeated into itself (``[[1] * 100000] * 100000``) is cheap
        to build but not to write; the walk stops at the first unit over the budget, so it
        costs at most the budget. A string alone costs one unit: building it was charged,
        and it is bounded in length."""
        if isinstance(value, str):
            self.charge(1)
            return
        stack: list[Any] = [value]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                self.charge(len(node) // CHARS_PER_UNIT + STEP_WORK)
            elif isinstance(node, Mapping):
                self.charge(len(node) * ITEM_WORK + STEP_WORK)
                stack.extend(node.keys())
                _push_nested(stack, node.values())
            elif isinstance(node, list | tuple):
                self.charge(len(node) * ITEM_WORK + STEP_WORK)
                _push_nested(stack, node)
            else:
                self.charge(STEP_WORK)


def _push_nested(stack: list[Any], items: Collection[Any]) -> None:
    """Push the items that cost more than the unit their container's length paid for (a
    list of numbers is paid for by its length alone, at C speed)."""
    if not set(map(type, items)) <= _UNNESTED:
        stack.extend(items)

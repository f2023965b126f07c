"""What an evaluation can see: the caller's context and the state of one render."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from tarry.errors import ExpressionError
from tarry.language.expressions.limits import (
    CHARS_PER_UNIT,
    ITEM_WORK,
    LOOP_WORK,
    MAX_WORK,
    STEP_WORK,
)

if TYPE_CHECKING:
    from tarry.language.calendars import Calendar

__all__ = ["Env", "EvalContext", "WorkMeter"]

_NO_CALENDARS: Mapping[str, Calendar] = MappingProxyType({})
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
    ``meter``, given, adds up the work of every render; ``calendars`` are the business
    calendars the ``plus`` and ``minus`` filters may name.
    """

    now: datetime
    timezone: str | None = None
    meter: WorkMeter | None = None
    calendars: Mapping[str, Calendar] = field(default_factory=lambda: _NO_CALENDARS)


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
        """Spend what writing ``value`` out (as JSON, into text, into the run's bindings)
        costs, before it is written: a step per list or object, :data:`LOOP_WORK` per item
        of one looked at in Python (:data:`ITEM_WORK` when all of them are numbers, looked
        at in C), and its strings' characters. A list repeated into itself
        (``[[1] * 100000] * 100000``) is cheap to build but not to write; the walk stops at
        the first unit over the budget, so it costs at most the budget. A string alone costs
        one unit: building it was charged, and it is bounded in length."""
        if not isinstance(value, Mapping | list | tuple):
            self.charge(1)
            return
        stack: list[Any] = [value]
        while stack:
            node = stack.pop()
            items = list(node.values()) if isinstance(node, Mapping) else node
            self.charge(STEP_WORK + len(items) * ITEM_WORK)  # its items' types, read in C
            if set(map(type, items)) <= _UNNESTED:  # numbers alone: written at C speed
                continue
            self.charge(len(items) * (LOOP_WORK - ITEM_WORK))
            chars = (sum(len(key) for key in node if isinstance(key, str))
                     if isinstance(node, Mapping) else 0)
            for item in items:
                if isinstance(item, str):
                    chars += len(item)
                elif isinstance(item, Mapping | list | tuple):
                    stack.append(item)
            self.charge(chars // CHARS_PER_UNIT)

"""What an evaluation can see: the caller's context and the state of one render."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tarry.errors import ExpressionError
from tarry.language.expressions.limits import MAX_WORK

__all__ = ["Env", "EvalContext"]


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

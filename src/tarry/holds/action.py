"""The built-in ``check`` action: ask a declared check once, from inside a flow.

``check: { name: jira }`` runs the check under the same contract as a hold (argv
``[path, target or run id]``, stdin ``/dev/null``, output counted and discarded, the timeout,
the fleet-wide check slots) and binds ``{status: go|not_yet|never|unknown, exit}``; it never
fails on the check's answer, so a ``repeat`` can poll it::

    - ticket:
        repeat: { every: 10m, max: 12, until: "{{ asked.status == 'go' }}" }
        steps:
          - asked: { check: { name: jira } }

A check that is not declared fails the step (``error.type = check-unknown``). When every check
slot stays taken for as long as a check may run, the answer is ``unknown`` and nothing runs.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

from tarry._suggest import did_you_mean
from tarry.actions import ActionContext, ActionFunction, ActionRegistry, StepFailure
from tarry.holds.checks import Answer
from tarry.holds.service import Holds

__all__ = ["SLOT_POLL_SECONDS", "check_action", "register_check"]

SLOT_POLL_SECONDS = 0.25
"""How often the action asks again for a check slot while every slot is taken."""

_ARGUMENTS = ("name",)


def check_action(holds: Holds) -> ActionFunction:
    """The ``check: {name}`` action over ``holds`` (declared checks, runner, slots)."""
    async def check(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        name = _check_name(args)
        path = holds.checks.get(name)
        if path is None:
            raise StepFailure(f"check '{name}' is not declared{did_you_mean(name, holds.checks)}"
                              "; declare it in [checks] of tarry.toml or in TARRY_CHECKS",
                              type="check-unknown")
        holder = f"{ctx.run_id}:{ctx.step_path}"
        if not await _wait_for_slot(holds, holder):
            return {"status": Answer.UNKNOWN.value, "exit": None}
        try:
            target = (await holds.aio.get_run(ctx.run_id)).target or ctx.run_id
            result = await holds.runner.run(name, path, target)
        finally:
            await holds.release_slot(holder)
        return {"status": result.answer.value, "exit": result.exit}
    return check


def _check_name(args: dict[str, Any]) -> str:
    for key in args:
        if key not in _ARGUMENTS:
            raise StepFailure(f"unknown check argument '{key}'{did_you_mean(key, _ARGUMENTS)}"
                              " (check takes {name})", type="check")
    name = args.get("name")
    if not isinstance(name, str) or not name:
        raise StepFailure("check needs 'name', the name of a declared check", type="check")
    return name


async def _wait_for_slot(holds: Holds, holder: str) -> bool:
    """Take a check slot, waiting for one at most as long as a check may run."""
    tries = max(1, math.ceil(holds.runner.timeout.total_seconds() / SLOT_POLL_SECONDS))
    for attempt in range(tries):
        if attempt:
            await asyncio.sleep(SLOT_POLL_SECONDS)
        if await holds.acquire_slot(holder, holds.clock.now()):
            return True
    return False


def register_check(registry: ActionRegistry, holds: Holds) -> None:
    """Add ``check`` bound to ``holds``, unless ``registry`` already has one (a stub or a
    user action of that name wins, as over every built-in)."""
    if "check" not in registry:
        registry.register("check", check_action(holds))

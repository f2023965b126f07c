"""``settle-order``: reserve stock, then poll the payment provider until the order settles.

The poll is a ``wait_for_condition``: each check asks the provider once and returns its
status; between checks the run is suspended (a row in the store, no process held), waking
after an exponentially growing delay. The check's state is checkpointed after every attempt,
so a worker that dies between polls loses nothing: another one goes on from the next poll.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shop import services
from shop.app import app
from tarry import CheckContext, Context, WaitForConditionError, WaitStrategy

__all__ = ["settle_order"]

TERMINAL = frozenset({"completed", "cancelled"})

SETTLE_STRATEGY: WaitStrategy[str] = WaitStrategy.exponential(
    max_attempts=20, initial_delay="2s", max_delay="10m",
    is_done=lambda status: status in TERMINAL)
"""Check at once, then after about 2s, 3s, 4.5s… (full jitter), at most every 10 minutes,
20 checks in all."""


def poll_status(order_id: str) -> Callable[[str, CheckContext], str]:
    """The check: the provider's current status of ``order_id``."""
    def check(previous: str, check_ctx: CheckContext) -> str:
        check_ctx.logger.info("polling %s (attempt %d, was %s)", order_id, check_ctx.attempt,
                              previous)
        return services.payment_status(order_id)
    return check


@app.flow("settle-order")
async def settle_order(ctx: Context, order_id: str) -> dict[str, Any]:
    """Reserve stock, wait for the payment to settle, then ship or release."""
    reservation = await ctx.step("reserve", services.reserve_stock, order_id)
    try:
        status = await ctx.wait_for_condition("wait-for-order-settle",
                                              check=poll_status(order_id),
                                              initial_state="unknown", strategy=SETTLE_STRATEGY)
    except WaitForConditionError as gave_up:
        await ctx.step("release", services.release_stock, reservation["id"])
        return {"order": order_id, "status": "unsettled", "last_seen": gave_up.last_state}
    if status == "completed":
        shipment = await ctx.step("ship", services.ship, order_id, reservation["id"])
        return {"order": order_id, "status": status, "tracking": shipment["tracking"]}
    await ctx.step("release", services.release_stock, reservation["id"])
    return {"order": order_id, "status": status}

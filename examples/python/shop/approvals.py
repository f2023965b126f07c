"""``approve-deal``: ask in Slack, wait a day for the reply, escalate when nobody answers.

``wait_for_event`` suspends the run until a ``slack.approval`` event whose ``message`` is the
ts of the post arrives (``tarry send slack.approval --data '{"message": "ts-…", "approved":
true}'``), or until the timeout. A timeout is a value (``reply.status == "timeout"``), not an
exception. A reply sent before the run reached the wait is buffered and taken at once.
"""

from __future__ import annotations

from typing import Any

from shop import services
from shop.app import app
from tarry import Context

__all__ = ["approve_deal"]


@app.flow("approve-deal")
async def approve_deal(ctx: Context, deal: dict[str, Any]) -> str:
    """Ask sales ops to approve ``deal``; approved, rejected or no-answer."""
    post = await ctx.step("ask", services.post_to_slack, "#sales-ops",
                          f"Approve {deal['name']} ({deal['amount']})?", f"{ctx.run_id}/ask")
    reply = await ctx.wait_for_event("approval", "slack.approval",
                                     match={"message": post["ts"]}, timeout="24h")
    if reply.status == "timeout":
        await ctx.step("escalate", services.post_to_slack, "#sales-leads",
                       f"Nobody answered on {deal['name']} in a day", f"{ctx.run_id}/escalate")
        return "no-answer"
    approved = bool(reply.event and reply.event["approved"])
    return "approved" if approved else "rejected"

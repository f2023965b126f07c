"""``collect-quotes``: ask every vendor at once and wait for each one's quote.

``ctx.map`` runs one branch per vendor. Each branch sends its request and waits for its own
``vendor.quote`` event (matched on vendor and request) with its own deadline; the run is
suspended on all the waits together and wakes for whichever comes first. Branches that have
their quote are recorded and never run again.
"""

from __future__ import annotations

from typing import Any

from shop import services
from shop.app import app
from tarry import Context

__all__ = ["ask_vendor", "collect_quotes"]


async def ask_vendor(ctx: Context, vendor: str) -> dict[str, Any]:
    """One branch: request a quote from ``vendor`` and wait three days for it."""
    await ctx.step("request", services.request_quote, vendor, ctx.run_id)
    reply = await ctx.wait_for_event("quote", "vendor.quote",
                                     match={"vendor": vendor, "request": ctx.run_id},
                                     timeout="3d")
    return {"vendor": vendor, "price": reply.event["price"] if reply.event else None}


@app.flow("collect-quotes")
async def collect_quotes(ctx: Context, vendors: list[str]) -> dict[str, Any]:
    """The quotes of ``vendors`` (None where none came in time) and the cheapest one."""
    quotes = await ctx.map(ask_vendor, vendors, name="quotes")
    priced = [quote for quote in quotes if quote["price"] is not None]
    return {"quotes": quotes,
            "best": min(priced, key=lambda quote: quote["price"]) if priced else None}

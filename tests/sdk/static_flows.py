"""Python flows with mistakes that reading their source finds (the lines are asserted)."""

from tarry import App, Context

app = App()


@app.flow("typos")
async def typos(ctx: Context, order_id: str) -> str:
    await ctx.wait("cooling-off", "2dd")
    reply = await ctx.wait_for_event("approval", "order.aproval",
                                     match={"order": order_id}, timeout="24h")
    await ctx.wait_for_event("again", "order.approval", match={"ordr": order_id},
                             timeout="1y")
    await ctx.wait("cooling-off", "1h")
    return str(reply.status)


@app.flow("fine")
async def fine(ctx: Context, order_id: str, late: bool = False) -> str:
    if late:
        await ctx.wait("pause", "1h")
    else:
        await ctx.wait("pause", "2h")
    reply = await ctx.wait_for_event("approval", "order.approval",
                                     match={"order": order_id}, timeout="2026-09-01T09:00:00Z")
    for index in range(2):
        await ctx.wait(f"tick-{index}", "1s")
    return str(reply.status)


patch_app = App()


@patch_app.flow("patches")
async def patches(ctx: Context) -> bool:
    ctx.deprecate_patch("old tax")
    if ctx.patched("new-tax") and ctx.patched("new-tax"):
        return ctx.patched("-rounding")
    return False

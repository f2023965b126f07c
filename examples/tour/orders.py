from tarry import App, Context

app = App()


@app.flow("settle-order")
async def settle_order(ctx: Context, order_id: str) -> str:
    await ctx.wait("cooling-off", "2d")
    reply = await ctx.wait_for_event("approval", "order.approval",
                                     match={"order": order_id}, timeout="24h")
    return "approved" if reply.status == "received" else "expired"

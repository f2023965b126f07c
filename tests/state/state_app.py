"""The Python flows whose waiting runs are kept as stored states (see record_states.py).

Deliberately small and stable: a stored state is only meaningful against the code that
wrote it, so these flows change only together with their stored files.
"""

from __future__ import annotations

from typing import Any

from tarry import App, CheckContext, Context, WaitStrategy

app = App()


def _greet(name: str) -> dict[str, str]:
    return {"text": f"hello {name}"}


def _poll(state: int, check: CheckContext) -> int:
    return state + 1


@app.flow("sdk-timer")
async def sdk_timer(ctx: Context, name: str) -> Any:
    greeting = await ctx.step("greet", _greet, name)
    await ctx.wait("nap", "1h")
    return greeting


@app.flow("sdk-event")
async def sdk_event(ctx: Context, order: str) -> Any:
    await ctx.step("greet", _greet, order)
    reply = await ctx.wait_for_event("approval", "order.reply", match={"order": order},
                                     timeout="1d")
    return {"status": reply.status, "event": reply.event}


@app.flow("sdk-condition")
async def sdk_condition(ctx: Context) -> Any:
    return await ctx.wait_for_condition(
        "settled", check=_poll, initial_state=0,
        strategy=WaitStrategy.fixed("10s", is_done=lambda state: state >= 3))


@app.flow("sdk-branches")
async def sdk_branches(ctx: Context) -> Any:
    async def branch(inner: Context, minutes: int) -> int:
        await inner.wait("nap", f"{minutes}m")
        return minutes

    return await ctx.map(branch, [10, 20], name="fan")

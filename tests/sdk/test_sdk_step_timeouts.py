"""A Python flow's step is bounded by ``[limits] action_timeout`` (5 minutes by default), on
the virtual clock and both stores: a hung sync step is abandoned in its thread, a hung async
one cancelled, and the flow sees :class:`~tarry.errors.StepError` of type ``timeout`` then
and on every replay; what the abandoned thread returns later is dropped."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta
from typing import Any

from sdk_support import HarnessFor

from tarry import App, Context, StepError
from tarry.model import RunStatus

TIMEOUT = "the action did not finish within its timeout (5m)"


async def _past_the_default(started: threading.Event, harness: Any) -> None:
    running = asyncio.create_task(harness.run_due())
    await asyncio.to_thread(started.wait, 5)
    harness.clock.advance(timedelta(minutes=5) - timedelta(milliseconds=1))
    await asyncio.sleep(0.05)
    assert not running.done()  # not a millisecond early
    harness.clock.advance(timedelta(milliseconds=1))
    await asyncio.wait_for(running, 10)


async def test_a_hung_sync_step_is_abandoned_at_the_default_timeout(
        harness_for: HarnessFor) -> None:
    app = App()
    started, release = threading.Event(), threading.Event()

    def hang() -> str:
        started.set()
        release.wait(10)
        return "too late"

    @app.flow("hung")
    async def flow(ctx: Context) -> dict[str, Any]:
        try:
            await ctx.step("hang", hang)
        except StepError as exc:
            await ctx.wait("nap", "1h")  # a replay raises it again
            return {"type": exc.type, "message": exc.message}
        return {"type": None, "message": None}

    harness = harness_for(app)
    run_id = harness.start("hung")
    await _past_the_default(started, harness)
    release.set()
    await harness.run_until_idle()
    record = harness.record(run_id)
    assert (record.status, record.result) == (RunStatus.SUCCEEDED,
                                              {"type": "timeout", "message": TIMEOUT})


async def test_a_hung_async_step_is_cancelled_at_the_default_timeout(
        harness_for: HarnessFor) -> None:
    app = App()
    started = threading.Event()
    cancelled: list[bool] = []

    async def hang() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "never"

    @app.flow("hung-async")
    async def flow(ctx: Context) -> str:
        try:
            return str(await ctx.step("hang", hang))
        except StepError as exc:
            return exc.type

    harness = harness_for(app)
    run_id = harness.start("hung-async")
    await _past_the_default(started, harness)
    assert cancelled == [True]
    record = harness.record(run_id)
    assert (record.status, record.result) == (RunStatus.SUCCEEDED, "timeout")

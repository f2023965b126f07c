"""A flow whose code changed under a running run (SPEC 6.3): the resume fails the run with
``nondeterminism``, naming the operation and what was recorded versus what the code asks."""

from __future__ import annotations

from datetime import timedelta

from sdk_support import HarnessFor

from tarry import App, Context, NondeterminismError
from tarry.model import RunStatus


def order_app(*, changed: bool = False, shorter: bool = False) -> App:
    """The same flow, as first deployed or changed while runs were waiting."""
    app = App()

    @app.flow("order")
    async def order(ctx: Context) -> str:
        await ctx.step("reserve", lambda: "R1")
        await ctx.wait("cooling-off", "1d")
        if shorter:
            return "done early"
        await ctx.step("ship" if changed else "charge", lambda: "ok")
        await ctx.wait("settle", "1d")
        return "done"

    return app


async def test_a_renamed_operation_fails_the_run_naming_it(harness_for: HarnessFor) -> None:
    first = harness_for(order_app())
    run_id = first.start("order")
    await first.run_due()
    await first.advance(timedelta(days=1))  # the original code records 'charge', then waits
    assert first.record(run_id).waiting_for is not None
    second = harness_for(order_app(changed=True))
    await second.run_until_idle()
    record = second.record(run_id)
    assert record.status is RunStatus.FAILED
    assert record.error == {
        "type": "nondeterminism", "step": "charge",
        "message": "the flow changed at operation 3: the run recorded step 'charge', the code "
                   "now asks for step 'ship'; its code changed while the run was in progress"}


async def test_new_operations_after_the_recorded_ones_are_fine(harness_for: HarnessFor) -> None:
    first = harness_for(order_app())
    run_id = first.start("order")
    await first.run_due()
    second = harness_for(order_app(changed=True))
    await second.run_until_idle()
    assert second.record(run_id).result == "done"


async def test_returning_before_a_recorded_operation_is_nondeterminism(
        harness_for: HarnessFor) -> None:
    first = harness_for(order_app())
    run_id = first.start("order")
    await first.run_due()
    await first.advance(timedelta(days=1))
    second = harness_for(order_app(shorter=True))
    await second.run_until_idle()
    assert second.record(run_id).error == {
        "type": "nondeterminism", "step": "charge",
        "message": "the flow changed at operation 3: the run recorded step 'charge', the code "
                   "now returns without it; its code changed while the run was in progress"}


async def test_catching_nondeterminism_does_not_save_the_run(harness_for: HarnessFor) -> None:
    app = App()

    @app.flow("order")
    async def order(ctx: Context) -> str:
        await ctx.step("reserve", lambda: "R1")
        try:
            await ctx.wait("other-name", "1d")
        except NondeterminismError:
            return "swallowed"
        return "done"

    first = harness_for(order_app())
    run_id = first.start("order")
    await first.run_due()
    second = harness_for(app)
    await second.run_until_idle()
    record = second.record(run_id)
    assert (record.status, record.result) == (RunStatus.FAILED, None)
    assert record.error is not None
    assert record.error["type"] == "nondeterminism"


async def test_a_changed_number_of_branches_is_nondeterminism(harness_for: HarnessFor) -> None:
    def fan_app(width: int) -> App:
        app = App()

        async def nap(ctx: Context, hours: int) -> int:
            await ctx.wait("nap", "1h")
            return hours

        @app.flow("fan")
        async def fan(ctx: Context) -> list[int]:
            return await ctx.map(nap, list(range(width)), name="naps")

        return app

    first = harness_for(fan_app(2))
    run_id = first.start("fan")
    await first.run_due()
    second = harness_for(fan_app(3))
    await second.run_until_idle()
    assert second.record(run_id).error == {
        "type": "nondeterminism", "step": "naps",
        "message": "the flow changed at operation 1: the run recorded map 'naps' with 2 "
                   "branches, the code now asks for map 'naps' with 3 branches; its code "
                   "changed while the run was in progress"}

"""Python flows through the real engine: steps run once and replay from the journal, failures
are recorded, the return value is the run's result, and misuse fails the run clearly."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta
from typing import Any

import pytest
from sdk_support import START, HarnessFor, exactly

from tarry import App, Context, StepError
from tarry.errors import RunError
from tarry.model import RunStatus


async def test_a_step_runs_once_however_many_times_the_flow_is_replayed(
        harness_for: HarnessFor) -> None:
    app = App()
    calls: list[str] = []

    def reserve(order_id: str) -> dict[str, Any]:
        calls.append(order_id)
        return {"reservation": f"R-{order_id}"}

    @app.flow("replayed")
    async def replayed(ctx: Context, order_id: str) -> dict[str, Any]:
        reservation: dict[str, Any] = await ctx.step("reserve", reserve, order_id)
        for hour in range(5):
            await ctx.wait(f"nap-{hour}", "1h")
        return reservation

    harness = harness_for(app)
    run_id = harness.start("replayed", {"order_id": "A1"})
    await harness.run_until_idle()
    record = harness.record(run_id)
    assert (record.status, record.exit, record.result) == (
        RunStatus.SUCCEEDED, "completed", {"reservation": "R-A1"})
    assert calls == ["A1"]
    assert harness.history_kinds(run_id).count("resumed") == 5
    assert harness.clock.now() == START + timedelta(hours=5)


async def test_sync_steps_run_off_the_event_loop_and_async_ones_on_it(
        harness_for: HarnessFor) -> None:
    app = App()
    threads: dict[str, int] = {}

    def plain() -> str:
        threads["plain"] = threading.get_ident()
        return "plain"

    async def awaited() -> str:
        threads["async"] = threading.get_ident()
        return "async"

    @app.flow("threads")
    async def flow(ctx: Context) -> list[str]:
        threads["flow"] = threading.get_ident()
        return [await ctx.step("plain", plain), await ctx.step("async", awaited)]

    harness = harness_for(app)
    run_id = harness.start("threads")
    await harness.run_due()
    assert harness.record(run_id).result == ["plain", "async"]
    assert threads["async"] == threads["flow"] != threads["plain"]


async def test_a_step_gets_its_arguments_and_keyword_arguments(harness_for: HarnessFor) -> None:
    app = App()

    def price(amount: int, *, currency: str, name: str) -> str:
        return f"{name}: {amount} {currency}"

    @app.flow("args")
    async def flow(ctx: Context) -> str:
        return await ctx.step("price", price, 5, currency="EUR", name="total")

    harness = harness_for(app)
    run_id = harness.start("args")
    await harness.run_due()
    assert harness.record(run_id).result == "total: 5 EUR"


async def test_a_failed_step_is_recorded_and_raised_again_on_replay_without_a_call(
        harness_for: HarnessFor) -> None:
    app = App()
    charges: list[int] = []

    def charge() -> None:
        charges.append(1)
        raise ValueError("card declined")

    @app.flow("declined")
    async def flow(ctx: Context) -> str:
        try:
            await ctx.step("charge", charge)
        except StepError as error:
            outcome = f"{error.step}: {error.type}: {error.message}"
        await ctx.wait("later", "1d")
        return outcome

    harness = harness_for(app)
    run_id = harness.start("declined")
    await harness.run_until_idle()
    record = harness.record(run_id)
    assert record.result == "charge: ValueError: card declined"
    assert charges == [1]
    failed = [e for e in harness.engine.store.history(run_id) if e.kind == "step.failed"]
    assert [(e.step, e.data) for e in failed] == [
        ("charge", {"error": {"type": "ValueError", "message": "card declined"}})]


async def test_an_uncaught_step_failure_fails_the_run_at_that_step(
        harness_for: HarnessFor) -> None:
    app = App()

    def charge() -> None:
        raise ValueError("card declined")

    @app.flow("declined")
    async def flow(ctx: Context) -> None:
        await ctx.step("charge", charge)

    harness = harness_for(app)
    run_id = harness.start("declined")
    await harness.run_due()
    record = harness.record(run_id)
    assert record.status is RunStatus.FAILED
    assert record.error == {"type": "step-error", "step": "charge",
                            "message": "step 'charge' raised ValueError: card declined"}


async def test_the_return_value_is_the_result_in_the_run_document(
        harness_for: HarnessFor) -> None:
    app = App()

    @app.flow("pair")
    async def flow(ctx: Context) -> tuple[int, str]:
        return (1, "two")

    harness = harness_for(app)
    run_id = harness.start("pair")
    await harness.run_due()
    document = harness.document(run_id)
    assert (document["status"], document["exit"], document["result"]) == (
        "succeeded", "completed", [1, "two"])
    assert document["flow"] == "pair"


async def test_a_result_that_is_not_json_fails_the_run_clearly(harness_for: HarnessFor) -> None:
    app = App()

    @app.flow("unstorable")
    async def flow(ctx: Context) -> None:
        await ctx.step("fetch", lambda: {"ids": {1, 2}})

    harness = harness_for(app)
    run_id = harness.start("unstorable")
    await harness.run_due()
    assert harness.record(run_id).error == {
        "type": "serialization", "step": None,
        "message": "the result of step 'fetch' cannot be stored: Object of type set is not JSON "
                   "serializable; return JSON data (dict, list, str, int, float, bool or None), "
                   "or give the App a serializer that handles it"}


async def test_a_result_no_store_can_keep_fails_the_run_with_a_value_error(
        harness_for: HarnessFor) -> None:
    app = App()

    @app.flow("nul")
    async def flow(ctx: Context) -> None:
        await ctx.step("fetch", lambda: {"note": "a\x00b"})

    harness = harness_for(app)
    run_id = harness.start("nul")
    await harness.run_due()
    assert harness.record(run_id).error == {
        "type": "value", "step": None,
        "message": "the result of step 'fetch': at note: a NUL character (\\u0000) is not "
                   "allowed in text (no store keeps it)"}


async def test_a_return_value_that_is_not_json_fails_the_run(harness_for: HarnessFor) -> None:
    app = App()

    @app.flow("unreturnable")
    async def flow(ctx: Context) -> object:
        return object

    harness = harness_for(app)
    run_id = harness.start("unreturnable")
    await harness.run_due()
    error = harness.record(run_id).error
    assert error is not None
    assert error["type"] == "serialization"
    assert error["message"].startswith("the value flow 'unreturnable' returned cannot be stored: "
                                       "Object of type type is not JSON serializable")


async def test_now_and_random_are_recorded_once(harness_for: HarnessFor) -> None:
    app = App()
    seen: list[tuple[str, float]] = []

    @app.flow("recorded")
    async def flow(ctx: Context) -> None:
        started, draw = ctx.now(), ctx.random()
        seen.append((started.isoformat(), draw))
        await ctx.wait("nap", "3h")
        seen.append((ctx.now("after").isoformat(), draw))

    harness = harness_for(app)
    run_id = harness.start("recorded")
    await harness.run_until_idle()
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    first, replayed, after = seen
    assert first == replayed
    assert first[0] == START.isoformat()
    assert 0 <= first[1] < 1
    assert after[0] == (START + timedelta(hours=3)).isoformat()


async def test_the_current_context_is_found_through_context_current(
        harness_for: HarnessFor) -> None:
    app = App()
    found: list[bool] = []

    def deep_inside() -> str:
        return Context.current().run_id

    @app.flow("current")
    async def flow(ctx: Context) -> str:
        found.append(Context.current() is ctx)
        return deep_inside()

    harness = harness_for(app)
    run_id = harness.start("current")
    await harness.run_due()
    assert harness.record(run_id).result == run_id
    assert found == [True]
    with pytest.raises(RuntimeError, match=exactly("no tarry flow is being executed here")):
        Context.current()


async def test_inputs_are_checked_against_the_function_signature(
        harness_for: HarnessFor) -> None:
    app = App()

    @app.flow("typed")
    async def flow(ctx: Context, order_id: str, count: int = 1) -> str:
        return f"{order_id} x{count}"

    harness = harness_for(app)
    with pytest.raises(RunError, match=exactly("input 'order_id' is required")):
        harness.start("typed")
    with pytest.raises(RunError, match=exactly("unknown input 'colour'; input 'order_id' must "
                                               "be a string, got 3")):
        harness.start("typed", {"order_id": 3, "colour": "red"})
    run_id = harness.start("typed", {"order_id": "A1"})
    await harness.run_due()
    assert harness.record(run_id).result == "A1 x1"
    assert harness.record(run_id).inputs == {"order_id": "A1", "count": 1}


async def test_an_exception_escaping_the_flow_fails_the_run_with_its_class(
        harness_for: HarnessFor) -> None:
    app = App()

    @app.flow("broken")
    async def flow(ctx: Context) -> None:
        raise LookupError("no such order")

    harness = harness_for(app)
    run_id = harness.start("broken")
    await harness.run_due()
    assert harness.record(run_id).error == {"type": "exception", "step": None,
                                            "message": "LookupError: no such order"}


async def test_operations_of_one_context_run_one_at_a_time(harness_for: HarnessFor) -> None:
    app = App()

    async def slow() -> int:
        await asyncio.sleep(0)
        return 1

    @app.flow("gathered")
    async def flow(ctx: Context) -> list[int]:
        return list(await asyncio.gather(ctx.step("a", slow), ctx.step("b", slow)))

    harness = harness_for(app)
    run_id = harness.start("gathered")
    await harness.run_due()
    assert harness.record(run_id).error == {
        "type": "exception", "step": None,
        "message": "RuntimeError: the flow: step 'b' started while step 'a' is still running; "
                   "await each operation before starting the next, or run them concurrently "
                   "with ctx.parallel or ctx.map"}


async def test_a_name_used_twice_fails_the_run(harness_for: HarnessFor) -> None:
    app = App()

    @app.flow("twice")
    async def flow(ctx: Context) -> None:
        for _ in range(2):
            await ctx.step("same", lambda: 1)

    harness = harness_for(app)
    run_id = harness.start("twice")
    await harness.run_due()
    assert harness.record(run_id).error == {
        "type": "exception", "step": None,
        "message": "ValueError: the flow uses the operation name 'same' twice; names must be "
                   "unique within the flow and within each branch"}


async def test_cleanup_code_unwinding_a_suspension_does_not_execute_operations(
        harness_for: HarnessFor) -> None:
    app = App()
    cleanups: list[str] = []

    @app.flow("cleanup")
    async def flow(ctx: Context) -> None:
        try:
            await ctx.wait("nap", "1h")
        finally:
            await ctx.step("cleanup", lambda: cleanups.append("done"))

    harness = harness_for(app)
    run_id = harness.start("cleanup")
    await harness.run_due()
    assert harness.record(run_id).status is RunStatus.WAITING
    assert cleanups == []
    await harness.run_until_idle()
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    assert cleanups == ["done"]


async def test_a_cancel_requested_during_a_step_ends_the_run_at_its_checkpoint(
        harness_for: HarnessFor) -> None:
    app = App()
    later: list[str] = []
    harnesses: list[Any] = []

    async def request_cancel() -> None:
        run_id = Context.current().run_id
        harnesses[0].engine.cancel(run_id, by="ops")

    @app.flow("cancelled")
    async def flow(ctx: Context) -> None:
        try:
            await ctx.step("first", request_cancel)
        except Exception:  # the teardown is no Exception: this handler never runs
            later.append("caught")
        await ctx.step("second", lambda: later.append("second"))

    harness = harness_for(app)
    harnesses.append(harness)
    run_id = harness.start("cancelled")
    await harness.run_due()
    assert harness.record(run_id).status is RunStatus.CANCELLED
    assert later == []
    assert harness.history_kinds(run_id)[-1] == "cancelled"

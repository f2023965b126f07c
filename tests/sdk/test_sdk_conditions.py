"""ctx.wait_for_condition through the real engine (SPEC 6.2): the state carried from check to
check and checkpointed, the run suspended between checks at the strategy's instants, the
condition met on the last attempt, exhaustion with the last state, and failing checks."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sdk_support import START, HarnessFor

from tarry import (
    App,
    CheckContext,
    Context,
    StepError,
    WaitForConditionError,
    WaitStrategy,
)
from tarry.model import RunStatus


class Poller:
    """A check that reports the given statuses in turn and remembers each call."""

    def __init__(self, *statuses: str) -> None:
        self.statuses = list(statuses)
        self.calls: list[tuple[Any, int, str]] = []

    def __call__(self, state: Any, check: CheckContext) -> dict[str, Any]:
        self.calls.append((state, check.attempt, check.condition))
        check.logger.info("polling")
        return {"status": self.statuses.pop(0), "polls": check.attempt}


def settle_app(poller: Poller, strategy: WaitStrategy[Any]) -> App:
    app = App()

    @app.flow("settle")
    async def settle(ctx: Context) -> Any:
        return await ctx.wait_for_condition("settled", check=poller, initial_state=None,
                                            strategy=strategy)

    return app


def done(state: dict[str, Any]) -> bool:
    return state["status"] in {"completed", "cancelled"}


async def test_the_state_goes_from_check_to_check_until_the_condition_is_met(
        harness_for: HarnessFor) -> None:
    poller = Poller("pending", "pending", "completed")
    harness = harness_for(settle_app(poller, WaitStrategy.fixed("30s", is_done=done)))
    run_id = harness.start("settle")
    await harness.run_due()
    record = harness.record(run_id)
    assert (record.status, record.due_at) == (RunStatus.WAITING, START + timedelta(seconds=30))
    assert record.waiting_for == {"kind": "poll", "step": "settled",
                                  "until": "2026-03-01T09:00:30.000Z", "event_type": None,
                                  "match": None, "since": "2026-03-01T09:00:00.000Z", "others": 0}
    await harness.run_until_idle()
    assert harness.record(run_id).result == {"status": "completed", "polls": 3}
    assert poller.calls == [(None, 1, "settled"),
                            ({"status": "pending", "polls": 1}, 2, "settled"),
                            ({"status": "pending", "polls": 2}, 3, "settled")]
    checked = [(e.at - START, e.data) for e in harness.engine.store.history(run_id)
               if e.kind == "condition.checked"]
    assert checked == [
        (timedelta(0), {"attempt": 1, "until": "2026-03-01T09:00:30.000Z"}),
        (timedelta(seconds=30), {"attempt": 2, "until": "2026-03-01T09:01:00.000Z"}),
        (timedelta(seconds=60), {"attempt": 3, "met": True})]


async def test_exponential_backoff_spaces_the_checks(harness_for: HarnessFor) -> None:
    poller = Poller("pending", "pending", "pending", "completed")
    strategy: WaitStrategy[Any] = WaitStrategy.exponential(
        initial_delay="10s", rate=2, jitter="none", is_done=done)
    harness = harness_for(settle_app(poller, strategy))
    run_id = harness.start("settle")
    await harness.run_until_idle()
    resumed = [e.at - START for e in harness.engine.store.history(run_id) if e.kind == "resumed"]
    assert resumed == [timedelta(seconds=10), timedelta(seconds=30), timedelta(seconds=70)]


async def test_a_condition_met_on_the_last_attempt_succeeds(harness_for: HarnessFor) -> None:
    poller = Poller("pending", "pending", "completed")
    harness = harness_for(settle_app(poller, WaitStrategy.fixed("1m", max_attempts=3,
                                                                is_done=done)))
    run_id = harness.start("settle")
    await harness.run_until_idle()
    assert harness.record(run_id).result == {"status": "completed", "polls": 3}


async def test_exhaustion_fails_the_run_with_the_attempts_and_the_last_state(
        harness_for: HarnessFor) -> None:
    poller = Poller("pending", "pending", "stuck")
    harness = harness_for(settle_app(poller, WaitStrategy.fixed("1m", max_attempts=3,
                                                                is_done=done)))
    run_id = harness.start("settle")
    await harness.run_until_idle()
    record = harness.record(run_id)
    assert record.status is RunStatus.FAILED
    assert record.error == {
        "type": "condition-exhausted", "step": "settled",
        "message": "condition 'settled' was not met after 3 attempts; last state: "
                   "{'status': 'stuck', 'polls': 3}"}
    assert len(poller.calls) == 3
    assert harness.clock.now() == START + timedelta(minutes=2)


async def test_the_flow_may_catch_exhaustion_and_read_the_last_state(
        harness_for: HarnessFor) -> None:
    app = App()
    poller = Poller("a", "b")

    @app.flow("tolerant")
    async def flow(ctx: Context) -> Any:
        try:
            return await ctx.wait_for_condition(
                "poll", check=poller, initial_state={},
                strategy=WaitStrategy.fixed("5s", max_attempts=2, is_done=done))
        except WaitForConditionError as exhausted:
            await ctx.wait("after", "1h")
            return {"attempts": exhausted.attempts, "last": exhausted.last_state}

    harness = harness_for(app)
    run_id = harness.start("tolerant")
    await harness.run_until_idle()
    assert harness.record(run_id).result == {"attempts": 2, "last": {"status": "b", "polls": 2}}
    assert len(poller.calls) == 2


async def test_an_async_check_and_the_default_strategy_with_a_boolean_state(
        harness_for: HarnessFor) -> None:
    app = App()
    attempts: list[int] = []

    async def check(state: bool, check_ctx: CheckContext) -> bool:
        attempts.append(check_ctx.attempt)
        return check_ctx.attempt == 3

    @app.flow("counting")
    async def flow(ctx: Context) -> bool:
        return await ctx.wait_for_condition("count", check=check, initial_state=False)

    harness = harness_for(app)
    run_id = harness.start("counting")
    await harness.run_until_idle()
    assert harness.record(run_id).result is True
    assert attempts == [1, 2, 3]


NOT_A_BOOLEAN = ("the condition's state is 'pending' (str), not True or False: without is_done "
                 "the state itself says whether the condition is met; pass is_done to the "
                 "strategy, e.g. is_done=lambda state: state == \"completed\"")


@pytest.mark.parametrize("strategy", [None, WaitStrategy.fixed("30s"), WaitStrategy.linear()])
async def test_a_state_that_is_not_a_boolean_without_is_done_fails_at_the_first_attempt(
        harness_for: HarnessFor, strategy: WaitStrategy[Any] | None) -> None:
    app = App()
    calls: list[int] = []

    def check(state: str, check_ctx: CheckContext) -> str:
        calls.append(check_ctx.attempt)
        return "pending"

    @app.flow("forgetful")
    async def flow(ctx: Context) -> str:
        if strategy is None:
            return await ctx.wait_for_condition("poll", check=check, initial_state="unknown")
        return await ctx.wait_for_condition("poll", check=check, initial_state="unknown",
                                            strategy=strategy)

    harness = harness_for(app)
    run_id = harness.start("forgetful")
    await harness.run_until_idle()
    record = harness.record(run_id)
    assert record.status is RunStatus.FAILED
    assert record.error == {"type": "step-error", "step": "poll",
                            "message": f"step 'poll' raised TypeError: {NOT_A_BOOLEAN}"}
    assert calls == [1]
    failed = [e.data for e in harness.engine.store.history(run_id) if e.kind == "step.failed"]
    assert failed == [{"attempt": 1, "error": {"type": "TypeError", "message": NOT_A_BOOLEAN}}]


async def test_a_caught_not_a_boolean_failure_replays_as_the_same_error(
        harness_for: HarnessFor) -> None:
    app = App()
    calls: list[int] = []

    def check(state: str, check_ctx: CheckContext) -> str:
        calls.append(check_ctx.attempt)
        return "pending"

    @app.flow("caught")
    async def flow(ctx: Context) -> str:
        try:
            await ctx.wait_for_condition("poll", check=check, initial_state="unknown")
        except StepError as error:
            await ctx.wait("then", "1h")
            return error.type
        return "met"

    harness = harness_for(app)
    run_id = harness.start("caught")
    await harness.run_until_idle()
    assert harness.record(run_id).result == "TypeError"
    assert calls == [1]


async def test_a_boolean_state_with_is_done_is_judged_by_is_done(
        harness_for: HarnessFor) -> None:
    app = App()

    def check(state: bool, check_ctx: CheckContext) -> bool:
        return check_ctx.attempt < 2

    @app.flow("inverted")
    async def flow(ctx: Context) -> bool:
        return await ctx.wait_for_condition(
            "poll", check=check, initial_state=True,
            strategy=WaitStrategy.fixed("10s", is_done=lambda busy: not busy))

    harness = harness_for(app)
    run_id = harness.start("inverted")
    await harness.run_until_idle()
    assert harness.record(run_id).result is False
    assert harness.clock.now() == START + timedelta(seconds=10)


async def test_a_failing_check_fails_the_condition_and_replays_as_the_same_error(
        harness_for: HarnessFor) -> None:
    app = App()
    calls: list[int] = []

    def check(state: bool, check_ctx: CheckContext) -> bool:
        calls.append(check_ctx.attempt)
        if check_ctx.attempt == 2:
            raise ConnectionError("provider down")
        return state

    @app.flow("flaky")
    async def flow(ctx: Context) -> str:
        try:
            await ctx.wait_for_condition("poll", check=check, initial_state=False,
                                         strategy=WaitStrategy.fixed("10s"))
        except Exception as error:
            await ctx.wait("then", "1h")
            return str(error)
        return "met"

    harness = harness_for(app)
    run_id = harness.start("flaky")
    await harness.run_until_idle()
    assert harness.record(run_id).result == "step 'poll' raised ConnectionError: provider down"
    assert calls == [1, 2]


async def test_a_state_that_cannot_be_stored_fails_the_run(harness_for: HarnessFor) -> None:
    app = App()

    @app.flow("unstorable")
    async def flow(ctx: Context) -> None:
        await ctx.wait_for_condition("poll", check=lambda state, _c: state,
                                     initial_state={"seen": {1}})

    harness = harness_for(app)
    run_id = harness.start("unstorable")
    await harness.run_due()
    assert harness.record(run_id).error == {
        "type": "serialization", "step": None,
        "message": "the initial state of condition 'poll' cannot be stored: Object of type set "
                   "is not JSON serializable; return JSON data (dict, list, str, int, float, "
                   "bool or None), or give the App a serializer that handles it"}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"check": "nope"}, "TypeError: wait_for_condition needs a callable check, got str"),
    ({"check": lambda s, c: s, "strategy": "fast"},
     "TypeError: wait_for_condition needs a WaitStrategy, such as WaitStrategy.exponential(), "
     "got str"),
])
async def test_condition_refusals(harness_for: HarnessFor, kwargs: dict[str, Any],
                                  message: str) -> None:
    app = App()

    @app.flow("misused")
    async def flow(ctx: Context) -> None:
        await ctx.wait_for_condition("poll", initial_state=0, **kwargs)

    harness = harness_for(app)
    run_id = harness.start("misused")
    await harness.run_due()
    assert harness.record(run_id).error == {"type": "exception", "message": message,
                                            "step": None}

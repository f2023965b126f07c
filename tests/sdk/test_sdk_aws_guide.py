"""docs/python.md's "Coming from the AWS durable execution SDKs": every row of its table is
pinned by a test of tarry's side here, and a row without one fails the last test."""

from __future__ import annotations

import inspect
import logging
import random
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sdk_support import START, HarnessFor

from tarry import (
    App,
    CheckContext,
    Context,
    Decision,
    Jitter,
    StepError,
    WaitForConditionError,
    WaitStrategy,
)
from tarry.model import RunStatus

GUIDE = (Path(__file__).resolve().parents[2] / "docs" / "python.md").read_text(encoding="utf-8")
SECTION = GUIDE[GUIDE.index("### Coming from the AWS"):GUIDE.index("## Determinism")]

PINNED: dict[str, str] = {}
"""table row (its first cell) → the test that pins tarry's side of it."""


def pins(row: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a test as the one checking ``row`` of the table."""
    def mark(test: Callable[..., Any]) -> Callable[..., Any]:
        PINNED[row] = test.__name__
        return test
    return mark


def tarry_cell(row: str) -> str:
    """The table's tarry column for ``row``."""
    line = next(line for line in SECTION.splitlines() if line.startswith(f"| {row} |"))
    return line.split(" | ")[-1].rstrip(" |")


class Draws(random.Random):
    """A random source that returns the given draws, in turn."""

    def __init__(self, *draws: float) -> None:
        super().__init__(0)
        self._draws = list(draws)

    def random(self) -> float:
        return self._draws.pop(0)


def delay(strategy: WaitStrategy[Any], attempt: int, *draws: float, state: Any = False
          ) -> timedelta:
    return strategy.decide(state, attempt, Draws(*draws)).delay


@pins("building a strategy")
def test_strategies_are_built_by_class_methods() -> None:
    for build in (WaitStrategy.exponential, WaitStrategy.linear, lambda: WaitStrategy.fixed("5s")):
        assert isinstance(build(), WaitStrategy)


@pins("defaults")
def test_the_defaults_are_the_aws_ones() -> None:
    defaults = {name: parameter.default for name, parameter
                in inspect.signature(WaitStrategy.exponential).parameters.items()}
    assert defaults == {"max_attempts": 60, "initial_delay": "5s", "max_delay": "300s",
                        "rate": 1.5, "jitter": Jitter.FULL, "is_done": None}
    assert tarry_cell("defaults") == ('the same: `max_attempts=60, initial_delay="5s", '
                                      'max_delay="300s", rate=1.5, jitter=Jitter.FULL`')


@pins("the predicate")
def test_is_done_is_the_inverse_of_should_continue_polling() -> None:
    def should_continue_polling(state: str) -> bool:
        return state == "pending"

    strategy: WaitStrategy[str] = WaitStrategy.exponential(
        is_done=lambda s: not should_continue_polling(s))
    assert strategy.decide("pending", 1, Draws(0.5)).should_continue
    assert strategy.decide("completed", 1, Draws()) == Decision.stop()


@pins("no predicate")
def test_without_is_done_only_a_boolean_state_is_an_answer() -> None:
    strategy: WaitStrategy[Any] = WaitStrategy.exponential()
    assert strategy.decide(True, 1, Draws()) == Decision.stop()
    assert strategy.decide(False, 1, Draws(0.5)).should_continue
    with pytest.raises(TypeError, match="pass is_done to the strategy"):
        strategy.decide("pending", 1, Draws())


@pins("delay after attempt n")
def test_attempt_one_waits_the_initial_delay_and_the_delay_grows_by_the_rate() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.exponential(initial_delay="10s", rate=2,
                                                            max_delay="50s", jitter="none")
    assert [delay(strategy, n) for n in (1, 2, 3, 4)] == [
        timedelta(seconds=10), timedelta(seconds=20), timedelta(seconds=40),
        timedelta(seconds=50)]


@pins("jitter")
def test_jitter_formulas() -> None:
    full: WaitStrategy[bool] = WaitStrategy.exponential(initial_delay="10s", jitter=Jitter.FULL)
    half: WaitStrategy[bool] = WaitStrategy.exponential(initial_delay="10s", jitter="half")
    exact: WaitStrategy[bool] = WaitStrategy.exponential(initial_delay="10s", jitter="none")
    assert delay(full, 1, 0.25) == timedelta(seconds=2.5)
    assert delay(half, 1, 0.25) == timedelta(seconds=6.25)
    assert delay(exact, 1) == timedelta(seconds=10)


@pins("shortest delay")
def test_a_delay_is_never_under_one_second() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.exponential()
    assert delay(strategy, 1, 0.0) == timedelta(seconds=1)
    assert delay(WaitStrategy.fixed("300ms"), 1) == timedelta(seconds=1)


@pins("rounding")
def test_delays_are_not_rounded_to_whole_seconds() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.exponential(jitter="none")
    assert delay(strategy, 2) == timedelta(seconds=7.5)


@pins("argument validation")
@pytest.mark.parametrize(("build", "message"), [
    (lambda: WaitStrategy.exponential(rate=0.5), "rate must be at least 1, got 0.5"),
    (lambda: WaitStrategy.exponential(initial_delay="0s"),
     "initial_delay must be longer than zero"),
])
def test_a_rate_below_one_or_a_zero_delay_is_refused(build: Callable[[], Any],
                                                     message: str) -> None:
    with pytest.raises(ValueError, match=r"^(rate|initial_delay) ") as raised:
        build()
    assert str(raised.value) == message
    assert f"`{message}`" in tarry_cell("argument validation")


@pins("condition and cap")
def test_the_condition_is_asked_before_the_cap() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.fixed("5s", max_attempts=3)
    assert strategy.decide(True, 3, Draws()) == Decision.stop()
    with pytest.raises(WaitForConditionError):
        strategy.decide(False, 3, Draws())


def poll_app(check: Callable[[Any, CheckContext], Any], *, catch: bool) -> App:
    """A flow polling ``check`` three times at most; with ``catch``, it returns the error's
    fields instead of failing."""
    app = App()

    @app.flow("poll")
    async def flow(ctx: Context) -> Any:
        try:
            return await ctx.wait_for_condition(
                "settled", check=check, initial_state="unknown",
                strategy=WaitStrategy.fixed("1m", max_attempts=3,
                                            is_done=lambda s: s == "completed"))
        except WaitForConditionError as exhausted:
            if not catch:
                raise
            return {"attempts": exhausted.attempts, "last_state": exhausted.last_state,
                    "condition": exhausted.condition}
        except StepError as failed:
            if not catch:
                raise
            return {"step": failed.step, "type": failed.type, "message": failed.message}

    return app


@pins("exhaustion")
async def test_exhaustion_raises_with_the_attempts_and_the_last_state(
        harness_for: HarnessFor) -> None:
    caught = harness_for(poll_app(lambda state, check: "pending", catch=True))
    run_id = caught.start("poll")
    await caught.run_until_idle()
    assert caught.record(run_id).result == {"attempts": 3, "last_state": "pending",
                                            "condition": "settled"}
    uncaught = harness_for(poll_app(lambda state, check: "pending", catch=False))
    run_id = uncaught.start("poll")
    await uncaught.run_until_idle()
    assert uncaught.record(run_id).error["type"] == "condition-exhausted"


@pins("a check that raises")
async def test_a_check_that_raises_is_a_step_error(harness_for: HarnessFor) -> None:
    def check(state: str, check: CheckContext) -> str:
        raise ConnectionError("provider down")

    harness = harness_for(poll_app(check, catch=True))
    run_id = harness.start("poll")
    await harness.run_until_idle()
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    assert harness.record(run_id).result == {"step": "settled", "type": "ConnectionError",
                                             "message": "provider down"}


@pins("a custom strategy")
def test_a_custom_strategy_returns_decisions() -> None:
    strategy: WaitStrategy[int] = WaitStrategy.from_function(
        lambda state, attempt: Decision.stop() if state > 2 else Decision.continue_after("30s"))
    assert strategy.decide(1, 1, Draws()).delay == timedelta(seconds=30)
    assert strategy.decide(3, 2, Draws()) == Decision.stop()


@pins("durations")
def test_durations_are_timedeltas_or_text() -> None:
    for written in (timedelta(minutes=5), "5m", "PT5M", "300s"):
        strategy: WaitStrategy[bool] = WaitStrategy.fixed(written)
        assert delay(strategy, 1) == timedelta(minutes=5)


@pins("the check")
async def test_the_check_gets_the_state_and_a_context(harness_for: HarnessFor) -> None:
    seen: list[tuple[Any, int, bool]] = []

    def check(state: str, check: CheckContext) -> str:
        seen.append((state, check.attempt, isinstance(check.logger, logging.LoggerAdapter)))
        return "completed" if check.attempt == 2 else "pending"

    harness = harness_for(poll_app(check, catch=False))
    run_id = harness.start("poll")
    await harness.run_until_idle()
    assert harness.record(run_id).result == "completed"
    assert seen == [("unknown", 1, True), ("pending", 2, True)]
    assert harness.clock.now() == START + timedelta(minutes=1)


def test_every_row_of_the_table_is_pinned_by_a_test() -> None:
    rows = [line.split(" | ")[0].removeprefix("| ") for line in SECTION.splitlines()
            if line.startswith("| ") and not line.startswith(("| point", "| ---"))]
    assert rows == list(PINNED)

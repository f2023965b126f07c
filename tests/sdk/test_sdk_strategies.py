"""Wait strategies (SPEC 6.2) as pure functions: delay sequences, jitter bounds, stopping,
giving up, the one-second floor, and every refusal with its message."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from tarry import Decision, Jitter, WaitForConditionError, WaitStrategy


class Draws(random.Random):
    """A random source that returns the given draws, in turn."""

    def __init__(self, *draws: float) -> None:
        super().__init__(0)
        self._draws = list(draws)

    def random(self) -> float:
        return self._draws.pop(0)


def seconds(*values: float) -> list[timedelta]:
    return [timedelta(seconds=value) for value in values]


def delays(strategy: WaitStrategy[bool], attempts: int, rng: random.Random) -> list[timedelta]:
    """The delay after each of ``attempts`` checks that did not meet the condition."""
    return [strategy.decide(False, attempt, rng).delay for attempt in range(1, attempts + 1)]


def test_exponential_defaults_grow_by_half_from_five_seconds_up_to_five_minutes() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.exponential(jitter=Jitter.NONE)
    assert delays(strategy, 7, Draws()) == seconds(5, 7.5, 11.25, 16.875, 25.3125, 37.96875,
                                                   56.953125)
    assert strategy.decide(False, 11, Draws()).delay == timedelta(seconds=288.325195)
    assert [strategy.decide(False, n, Draws()).delay
            for n in (12, 40, 59)] == seconds(300, 300, 300)


def test_exponential_defaults_give_up_after_sixty_attempts() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.exponential()
    assert strategy.decide(False, 59, random.Random(1)).should_continue
    with pytest.raises(WaitForConditionError) as raised:
        strategy.decide(False, 60, random.Random(1))
    assert (raised.value.attempts, raised.value.last_state) == (60, False)


def test_exponential_with_its_own_numbers() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.exponential(
        initial_delay=timedelta(seconds=2), rate=3, max_delay="1m", jitter=Jitter.NONE)
    assert delays(strategy, 5, Draws()) == seconds(2, 6, 18, 54, 60)


def test_exponential_never_overflows_however_many_attempts() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.exponential(max_attempts=100_000, rate=10,
                                                           jitter=Jitter.NONE)
    assert strategy.decide(False, 5_000, Draws()).delay == timedelta(seconds=300)


def test_full_jitter_is_uniform_between_zero_and_the_delay_floored_at_one_second() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.exponential(initial_delay="10s", rate=2)
    assert delays(strategy, 3, Draws(0.5, 0.25, 0.0)) == seconds(5, 5, 1)
    rng = random.Random(7)
    for attempt in range(1, 60):
        base = min(10 * 2 ** (attempt - 1), 300)
        delay = strategy.decide(False, attempt, rng).delay.total_seconds()
        assert 1 <= delay <= base


def test_half_jitter_is_between_half_the_delay_and_the_delay() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.exponential(initial_delay="8s", rate=2,
                                                           jitter=Jitter.HALF)
    assert delays(strategy, 2, Draws(0.0, 0.5)) == seconds(4, 12)
    rng = random.Random(3)
    for attempt in range(1, 60):
        base = min(8 * 2 ** (attempt - 1), 300)
        delay = strategy.decide(False, attempt, rng).delay.total_seconds()
        assert base / 2 <= delay <= base


@pytest.mark.parametrize(("jitter", "draw", "expected"), [
    (Jitter.FULL, 0.3, 3.0), (Jitter.HALF, 0.3, 6.5), (Jitter.NONE, 0.3, 10.0)])
def test_jitter_apply(jitter: Jitter, draw: float, expected: float) -> None:
    assert jitter.apply(timedelta(seconds=10), draw) == timedelta(seconds=expected)


def test_linear_defaults_add_five_seconds_each_time_without_a_cap() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.linear()
    assert delays(strategy, 4, Draws()) == seconds(5, 10, 15, 20)
    assert strategy.decide(False, 59, Draws()).delay == timedelta(seconds=295)
    with pytest.raises(WaitForConditionError):
        strategy.decide(False, 60, Draws())


def test_linear_with_a_cap() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.linear(initial_delay="1m", increment="30s",
                                                      max_delay="2m")
    assert delays(strategy, 5, Draws()) == seconds(60, 90, 120, 120, 120)


def test_fixed_waits_the_same_every_time() -> None:
    strategy: WaitStrategy[int] = WaitStrategy.fixed("30s", max_attempts=3,
                                                     is_done=lambda state: state > 10)
    assert delays(strategy, 2, Draws()) == seconds(30, 30)
    with pytest.raises(WaitForConditionError) as raised:
        strategy.decide(7, 3, Draws())
    assert (raised.value.attempts, raised.value.last_state) == (3, 7)


def test_a_delay_under_one_second_is_floored() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.fixed("200ms")
    assert strategy.decide(False, 1, Draws()).delay == timedelta(seconds=1)
    assert Decision.continue_after("10ms").delay == timedelta(seconds=1)
    assert Decision.continue_after(timedelta(minutes=2)).delay == timedelta(minutes=2)


def test_is_done_is_asked_first_so_the_last_attempt_may_succeed() -> None:
    strategy: WaitStrategy[str] = WaitStrategy.fixed(
        "5s", max_attempts=3, is_done=lambda state: state == "settled")
    assert strategy.decide("pending", 2, Draws()).should_continue
    assert strategy.decide("settled", 3, Draws()) == Decision.stop()
    with pytest.raises(WaitForConditionError) as raised:
        strategy.decide("pending", 3, Draws())
    assert str(raised.value) == "the condition was not met after 3 attempts; last state: 'pending'"


def test_without_is_done_the_state_is_the_answer_true_or_false() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.exponential()
    assert strategy.decide(True, 1, Draws()) == Decision.stop()
    assert strategy.decide(False, 1, Draws(0.5)).should_continue


def test_with_is_done_a_boolean_state_is_judged_by_is_done() -> None:
    strategy: WaitStrategy[bool] = WaitStrategy.fixed("5s", is_done=lambda state: not state)
    assert strategy.decide(False, 1, Draws()) == Decision.stop()
    assert strategy.decide(True, 1, Draws()).should_continue


NOT_A_BOOLEAN = ("({kind}), not True or False: without is_done the state itself says whether "
                 "the condition is met; pass is_done to the strategy, e.g. is_done=lambda "
                 "state: state == \"completed\"")


@pytest.mark.parametrize("build", [
    WaitStrategy.exponential, WaitStrategy.linear, lambda: WaitStrategy.fixed("30s")])
@pytest.mark.parametrize(("state", "shown", "kind"), [
    ("pending", "'pending'", "str"), ({"id": 1}, "{'id': 1}", "dict"), (None, "None", "NoneType"),
    (1, "1", "int"), ("x" * 100, "'" + "x" * 76 + "...", "str")])
def test_without_is_done_any_other_state_is_refused_saying_to_pass_is_done(
        build: object, state: object, shown: str, kind: str) -> None:
    assert callable(build)
    strategy = build()
    with pytest.raises(TypeError) as raised:
        strategy.decide(state, 1, Draws(0.5))
    assert str(raised.value) == (f"the condition's state is {shown} "
                                 + NOT_A_BOOLEAN.format(kind=kind))


def test_from_function_decides_with_the_state_and_the_attempt() -> None:
    seen: list[tuple[int, int]] = []

    def decide(state: int, attempt: int) -> Decision:
        seen.append((state, attempt))
        return Decision.stop() if state > 2 else Decision.continue_after(f"{attempt}m")

    strategy = WaitStrategy.from_function(decide)
    assert strategy.decide(1, 4, Draws()).delay == timedelta(minutes=4)
    assert strategy.decide(3, 5, Draws()) == Decision.stop()
    assert seen == [(1, 4), (3, 5)]


def test_from_function_must_return_a_decision() -> None:
    strategy: WaitStrategy[int] = WaitStrategy.from_function(lambda state, attempt: "later")  # type: ignore[arg-type, return-value]
    with pytest.raises(TypeError) as raised:
        strategy.decide(False, 1, Draws())
    assert str(raised.value) == "a wait strategy must return a Decision, got str"


@pytest.mark.parametrize(("build", "error", "message"), [
    (lambda: WaitStrategy.exponential(max_attempts=0), ValueError,
     "max_attempts must be a positive integer, got 0"),
    (lambda: WaitStrategy.linear(max_attempts=True), ValueError,
     "max_attempts must be a positive integer, got True"),
    (lambda: WaitStrategy.exponential(rate=0.5), ValueError, "rate must be at least 1, got 0.5"),
    (lambda: WaitStrategy.exponential(jitter="some"), ValueError,
     "jitter must be one of full, half, none, got 'some'"),
    (lambda: WaitStrategy.exponential(initial_delay="0s"), ValueError,
     "initial_delay must be longer than zero"),
    (lambda: WaitStrategy.exponential(max_delay=timedelta(0)), ValueError,
     "max_delay must be longer than zero"),
    (lambda: WaitStrategy.exponential(initial_delay="soon"), ValueError,
     "initial_delay: 'soon' is not a duration (use e.g. 500ms, 30s, 15m, 24h, 2d, 1w, 1h30m "
     "or ISO 8601 like PT30S)"),
    (lambda: WaitStrategy.exponential(initial_delay=5), TypeError,  # type: ignore[arg-type]
     "initial_delay must be a timedelta or a duration string such as '30s', got int"),
    (lambda: WaitStrategy.linear(increment=timedelta(seconds=-1)), ValueError,
     "increment must not be negative"),
    (lambda: WaitStrategy.linear(max_delay="0s"), ValueError,
     "max_delay must be longer than zero"),
    (lambda: WaitStrategy.fixed("0s"), ValueError, "delay must be longer than zero"),
    (lambda: Decision.continue_after("1mo"), ValueError,
     "continue_after delay: duration '1mo' uses months or years, whose length is ambiguous; "
     "use days or weeks"),
])
def test_refusals(build: object, error: type[Exception], message: str) -> None:
    assert callable(build)
    with pytest.raises(error) as raised:
        build()
    assert str(raised.value) == message

"""Wait strategies for ``wait_for_condition``: after each check, stop or poll again later.

Pure functions of the state, the attempt number and a random draw — no clock, no I/O::

    WaitStrategy.exponential(is_done=lambda s: s in {"completed", "cancelled"})
    WaitStrategy.linear(initial_delay="10s", increment="10s", max_delay="2m")
    WaitStrategy.fixed("30s", max_attempts=20)
    WaitStrategy.from_function(lambda state, attempt: Decision.stop() if state else
                               Decision.continue_after("1m"))

A built-in strategy asks ``is_done(state)`` first, so a condition met on the last attempt
succeeds; then, with attempts left, continues after its delay; with none left it raises
:class:`~tarry.errors.WaitForConditionError`. Without ``is_done`` the state itself must be a
boolean (``True`` is done): any other state raises ``TypeError`` saying to pass ``is_done``,
so a check returning ``"pending"`` is never taken for a met condition. Every delay is floored
at one second and otherwise kept exact (never rounded to whole seconds).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Generic, TypeVar

from tarry.backoff import Jitter, grown, linear
from tarry.errors import WaitForConditionError
from tarry.language.durations import check_duration, parse_duration

__all__ = ["MIN_DELAY", "Decision", "Jitter", "WaitStrategy", "as_duration"]

S = TypeVar("S")

MIN_DELAY = timedelta(seconds=1)
"""The shortest pause between two checks; a shorter delay is raised to it."""


def as_duration(value: timedelta | str, what: str) -> timedelta:
    """``value`` as a timedelta: a timedelta as is, or a duration string such as ``"30s"``."""
    if not isinstance(value, timedelta | str):
        raise TypeError(f"{what} must be a timedelta or a duration string such as '30s', "
                        f"got {type(value).__name__}")
    try:
        return check_duration(value) if isinstance(value, timedelta) else parse_duration(value)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None


@dataclass(frozen=True)
class Decision:
    """What a strategy decided after a check: stop (the condition is met: return the state),
    or check again after ``delay`` (floored at :data:`MIN_DELAY`)."""

    should_continue: bool
    delay: timedelta = timedelta(0)

    def __post_init__(self) -> None:
        if self.should_continue and self.delay < MIN_DELAY:
            object.__setattr__(self, "delay", MIN_DELAY)

    @classmethod
    def stop(cls) -> Decision:
        """The condition is met: ``wait_for_condition`` returns the latest state."""
        return cls(False)

    @classmethod
    def continue_after(cls, delay: timedelta | str) -> Decision:
        """Suspend the run, then check again after ``delay``."""
        return cls(True, as_duration(delay, "continue_after delay"))


@dataclass(frozen=True)
class WaitStrategy(Generic[S]):
    """Decides, after each check, whether to stop or to check again later.

    Build one with :meth:`exponential`, :meth:`linear`, :meth:`fixed` or
    :meth:`from_function`.
    """

    _decide: Callable[[S, int, random.Random], Decision]

    def decide(self, state: S, attempt: int, rng: random.Random) -> Decision:
        """The decision after check number ``attempt`` (1-based) returned ``state``; raises
        :class:`~tarry.errors.WaitForConditionError` when giving up."""
        decision = self._decide(state, attempt, rng)
        if not isinstance(decision, Decision):
            raise TypeError(f"a wait strategy must return a Decision, got "
                            f"{type(decision).__name__}")
        return decision

    @classmethod
    def exponential(cls, *, max_attempts: int = 60, initial_delay: timedelta | str = "5s",
                    max_delay: timedelta | str = "300s", rate: float = 1.5,
                    jitter: Jitter | str = Jitter.FULL,
                    is_done: Callable[[S], bool] | None = None) -> WaitStrategy[S]:
        """Delays ``initial_delay · rate^(n-1)`` after attempt n, capped at ``max_delay``,
        with ``jitter`` (a :class:`Jitter` or its name: ``full``, ``half``, ``none``)."""
        spread = _jitter(jitter)
        if rate < 1:
            raise ValueError(f"rate must be at least 1, got {rate}")
        initial = _positive(initial_delay, "initial_delay")
        cap = _positive(max_delay, "max_delay")
        return cls(_polling(lambda n: grown(initial, rate, n - 1, cap), max_attempts, spread,
                            _done_test(is_done)))

    @classmethod
    def linear(cls, *, max_attempts: int = 60, initial_delay: timedelta | str = "5s",
               increment: timedelta | str = "5s", max_delay: timedelta | str | None = None,
               is_done: Callable[[S], bool] | None = None) -> WaitStrategy[S]:
        """Delays ``initial_delay + increment · (n-1)`` after attempt n, capped at
        ``max_delay`` when given; no jitter."""
        initial = _positive(initial_delay, "initial_delay")
        step = as_duration(increment, "increment")
        if step < timedelta(0):
            raise ValueError("increment must not be negative")
        cap = None if max_delay is None else _positive(max_delay, "max_delay")

        return cls(_polling(lambda n: linear(initial, step, n - 1, cap), max_attempts,
                            Jitter.NONE, _done_test(is_done)))

    @classmethod
    def fixed(cls, delay: timedelta | str, *, max_attempts: int = 60,
              is_done: Callable[[S], bool] | None = None) -> WaitStrategy[S]:
        """The same ``delay`` after every attempt; no jitter."""
        pause = _positive(delay, "delay")
        return cls(_polling(lambda _attempt: pause, max_attempts, Jitter.NONE,
                            _done_test(is_done)))

    @classmethod
    def from_function(cls, function: Callable[[S, int], Decision]) -> WaitStrategy[S]:
        """A strategy that is ``function(state, attempt) -> Decision``; it gives up by
        raising :class:`~tarry.errors.WaitForConditionError`."""
        return cls(lambda state, attempt, _rng: function(state, attempt))


def _polling(delay: Callable[[int], timedelta], max_attempts: int, jitter: Jitter,
             done: Callable[[S], bool]) -> Callable[[S, int, random.Random], Decision]:
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
        raise ValueError(f"max_attempts must be a positive integer, got {max_attempts!r}")

    def decide(state: S, attempt: int, rng: random.Random) -> Decision:
        if done(state):
            return Decision.stop()
        if attempt >= max_attempts:
            raise WaitForConditionError(attempt, state)
        draw = 0.0 if jitter is Jitter.NONE else rng.random()
        return Decision.continue_after(jitter.apply(delay(attempt), draw))

    return decide


def _done_test(is_done: Callable[[S], bool] | None) -> Callable[[S], bool]:
    """``is_done`` when given; else the state itself, which must then be a boolean."""
    if is_done is not None:
        return is_done

    def state_is_true(state: S) -> bool:
        if isinstance(state, bool):
            return state
        shown = repr(state)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        raise TypeError(
            f"the condition's state is {shown} ({type(state).__name__}), not True or False: "
            f"without is_done the state itself says whether the condition is met; pass "
            f"is_done to the strategy, e.g. is_done=lambda state: state == \"completed\"")

    return state_is_true


def _jitter(value: Jitter | str) -> Jitter:
    try:
        return Jitter(value)
    except ValueError:
        raise ValueError(f"jitter must be one of {', '.join(Jitter)}, got {value!r}") from None


def _positive(value: timedelta | str, what: str) -> timedelta:
    duration = as_duration(value, what)
    if duration <= timedelta(0):
        raise ValueError(f"{what} must be longer than zero")
    return duration

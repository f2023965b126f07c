"""The loop-lag benchmark counts every tick whose sleep overlapped the burst."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def loop_lag(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The benchmark's module, importable with its ``common`` beside it."""
    monkeypatch.syspath_prepend(str(_BENCH))
    return importlib.import_module("loop_lag")


def test_a_burst_within_one_late_tick_still_has_that_tick(loop_lag: ModuleType) -> None:
    ticker = loop_lag.Ticker()
    ticker.samples = [(9.0, 9.002, 0.0), (9.002, 10.030, 1.026), (10.030, 10.032, 0.0)]
    # the burst ran from 10.000 to 10.010, all of it inside the second, late sleep
    assert ticker.lags(10.000, 10.010) == [1.026]


def test_ticks_before_and_after_the_burst_are_left_out(loop_lag: ModuleType) -> None:
    ticker = loop_lag.Ticker()
    ticker.samples = [(9.990, 9.992, 0.5), (9.998, 10.001, 0.1), (10.011, 10.013, 0.7)]
    assert ticker.lags(10.000, 10.010) == [0.1]

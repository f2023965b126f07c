"""The peers' adapters wait for wakes as long as items go on waking (``_kit.await_wakes``):
a system minutes behind in a flood of 100,000 gets its figures, one that stopped gets an
error."""

from __future__ import annotations

import importlib.util
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

_KIT = Path(__file__).resolve().parents[2] / "bench" / "peers" / "adapters" / "_kit.py"


@pytest.fixture
def kit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The adapters' kit, loaded afresh, recording wakes in ``tmp_path``."""
    spec = importlib.util.spec_from_file_location("peers_kit", _KIT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclasses look it up there
    spec.loader.exec_module(module)
    monkeypatch.chdir(tmp_path)
    return module


@contextmanager
def _waking(kit: ModuleType, items: list[str], every: float) -> Iterator[None]:
    """``items`` woken one by one, ``every`` s apart, beside the block (its end waits for
    the last, so that none is recorded after the test)."""
    def wake() -> None:
        for item in items:
            time.sleep(every)
            kit.record_wake(item)
    thread = threading.Thread(target=wake)
    thread.start()
    try:
        yield
    finally:
        thread.join()


@pytest.mark.slow
def test_items_that_go_on_waking_are_waited_for_past_the_timeout(kit: ModuleType) -> None:
    items = [f"i{index}" for index in range(8)]
    began = time.monotonic()
    with _waking(kit, items, every=0.1):  # 0.8 s in all, a wake every 0.1 s
        woke = kit.await_wakes(items, 0.3)
    assert sorted(woke) == items
    assert time.monotonic() - began >= 0.7


@pytest.mark.slow
def test_items_that_stop_waking_are_given_up_once_the_timeout_passes_with_none(
        kit: ModuleType) -> None:
    items = [f"i{index}" for index in range(5)]
    began = time.monotonic()
    with _waking(kit, items[:2], every=0.1), pytest.raises(TimeoutError) as caught:
        kit.await_wakes(items, 0.3)
    assert str(caught.value) == ("3 of 5 items never woke, nothing in the last 0.3 s "
                                 "(first: ['i2', 'i3', 'i4'])")
    assert 0.5 <= time.monotonic() - began < 2


class _Clock:
    """``time`` for the kit: ``sleep`` and slow submits move ``monotonic`` on at once."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_system_slower_than_the_pace_submits_until_the_cap_and_no_further(
        kit: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr(kit, "time", clock)
    submitted: list[int] = []

    def slow_submit(index: int) -> None:  # 8 a second, against a pace of 100
        submitted.append(index)
        clock.now += 0.125

    took = kit.paced(1000, 100.0, slow_submit, cap_s=1.0)
    assert submitted == list(range(8))
    assert took == pytest.approx(1.0)


def test_a_system_that_keeps_the_pace_submits_every_item_at_its_instant(
        kit: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock()
    monkeypatch.setattr(kit, "time", clock)
    instants: list[float] = []
    kit.paced(5, 100.0, lambda index: instants.append(clock.now), cap_s=10.0)
    assert instants == pytest.approx([0.0, 0.01, 0.02, 0.03, 0.04])

"""Sync calls' threads (``tarry.actions.in_thread``): a call that never returns is never
waited for, idle threads are reused and end when idle long enough, an abandoned call's
result goes nowhere, and the caller's context variables reach the call."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from tarry.actions import _Threads, in_thread

NAME: contextvars.ContextVar[str] = contextvars.ContextVar("name", default="unset")


def test_a_call_that_never_returns_does_not_hold_up_the_next() -> None:
    threads = _Threads()
    stuck, ran = threading.Event(), threading.Event()
    threads.submit(lambda: stuck.wait(10))
    threads.submit(ran.set)
    assert ran.wait(5)
    stuck.set()


def test_an_idle_thread_is_reused_and_ends_once_idle_long_enough() -> None:
    threads = _Threads(idle_seconds=0.2)
    seen: list[threading.Thread] = []
    done = threading.Event()

    def note() -> None:
        seen.append(threading.current_thread())
        done.set()

    for _ in range(3):
        done.clear()
        threads.submit(note)
        assert done.wait(5)
        for _ in range(100):  # until the thread counts itself idle again
            if threads._free:
                break
            threading.Event().wait(0.005)
    assert len(set(seen)) == 1
    seen[0].join(5)
    assert not seen[0].is_alive()
    assert threads._free == 0


async def test_the_call_sees_the_callers_context_and_its_exceptions_come_back() -> None:
    NAME.set("caller")
    assert await in_thread(NAME.get) == "caller"

    def fail() -> None:
        raise KeyboardInterrupt("from the call")

    with pytest.raises(KeyboardInterrupt, match="from the call"):
        await in_thread(fail)


async def test_an_abandoned_call_goes_nowhere() -> None:
    release, returned = threading.Event(), threading.Event()

    def slow() -> str:
        release.wait(5)
        returned.set()
        return "late"

    call = asyncio.ensure_future(in_thread(slow))
    await asyncio.sleep(0.01)
    call.cancel()
    release.set()
    await asyncio.to_thread(returned.wait, 5)
    await asyncio.sleep(0.01)  # the result handed to the loop has had its turn
    assert call.cancelled()

"""tarry's event loop: its timers fire within a fraction of a millisecond, where asyncio's
own loop on epoll waits whole milliseconds, and it still hears every descriptor."""

from __future__ import annotations

import asyncio
import os
import resource
import selectors
import socket
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager

import pytest
import uvicorn

from tarry import eventloop
from tarry.server import serving

pytestmark = pytest.mark.skipif(not hasattr(selectors, "EpollSelector"),
                                reason="only epoll rounds its waits to milliseconds")

WAIT = 0.0003
"""A wait shorter than a millisecond: epoll, rounding it up, waits a whole one."""
TRIES = 20


def _shortest_wait(selector: selectors.BaseSelector) -> float:
    """The shortest of ``TRIES`` waits of ``WAIT`` seconds on ``selector``, nothing ready."""
    waits = []
    for _ in range(TRIES):
        began = time.perf_counter()
        assert selector.select(WAIT) == []
        waits.append(time.perf_counter() - began)
    return min(waits)


def test_the_selector_waits_less_than_the_millisecond_epoll_rounds_up_to() -> None:
    with closing(eventloop.new_event_loop()) as loop:
        selector = loop._selector  # type: ignore[attr-defined]
        assert WAIT <= _shortest_wait(selector) < 0.001
    with selectors.EpollSelector() as epoll:  # what it improves on
        assert _shortest_wait(epoll) >= 0.0009


def test_a_loop_timer_fires_within_a_fraction_of_a_millisecond() -> None:
    async def lateness() -> float:
        loop = asyncio.get_running_loop()
        late = []
        for _ in range(TRIES):
            due = loop.time() + WAIT
            await asyncio.sleep(WAIT)
            late.append(loop.time() - due)
        return min(late)

    assert 0 <= eventloop.run(lateness()) < 0.0007


def test_a_ready_descriptor_ends_the_wait_at_once_with_its_event() -> None:
    left, right = socket.socketpair()
    with left, right, closing(eventloop.new_event_loop()) as loop:
        selector = loop._selector  # type: ignore[attr-defined]
        key = selector.register(left, selectors.EVENT_READ)
        right.send(b"x")
        began = time.perf_counter()
        assert selector.select(10) == [(key, selectors.EVENT_READ)]
        assert time.perf_counter() - began < 5


@contextmanager
def _descriptors_taken(count: int) -> Iterator[None]:
    """``count`` descriptors open, so that the next one opened is numbered beyond them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < count + 64:
        pytest.skip(f"the hard limit of open files ({hard}) is below {count + 64}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, count + 64), hard))
    taken = [os.open(os.devnull, os.O_RDONLY) for _ in range(count)]
    try:
        yield
    finally:
        for descriptor in taken:
            os.close(descriptor)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_an_epoll_descriptor_beyond_selects_reach_waits_in_epoll_instead() -> None:
    with _descriptors_taken(1100), closing(eventloop.new_event_loop()) as loop:
        selector = loop._selector  # type: ignore[attr-defined]
        assert selector.fileno() >= 1024  # select() refuses it
        left, right = socket.socketpair()
        with left, right:
            key = selector.register(left, selectors.EVENT_READ)
            began = time.perf_counter()
            assert selector.select(WAIT) == []
            assert time.perf_counter() - began >= WAIT
            assert not selector._select_reaches  # not asked again on every wait
            right.send(b"x")
            assert selector.select(10) == [(key, selectors.EVENT_READ)]


def test_run_returns_what_its_coroutine_returns() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert eventloop.run(answer()) == 42


def test_tarry_serve_gives_uvicorn_this_loop() -> None:
    config = uvicorn.Config(lambda *_: None, loop=serving._LOOP)
    assert config.get_loop_factory() is eventloop.new_event_loop

"""Event delivery under concurrency (SPEC 3.5): nothing lost, nothing delivered twice.

Several sender threads and several worker threads share one database, each with an engine and
a store of its own (as separate processes would), on the real clock. Runs register their waits
while events arrive: some events come before their run reached its wait (they must be taken
from the buffer), some while it registers, some after. Afterwards every event is accounted for
and every run received exactly its own event, once. Each test is bounded to a few seconds.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionRegistry
from tarry.clock import SystemClock
from tarry.engine.builtins import register_builtins
from tarry.engine.catalog import FlowCatalog
from tarry.engine.runtime import Engine
from tarry.language.loader import parse_flow
from tarry.language.manifests import parse_manifests
from tarry.language.model import Flow
from tarry.model import EventRecord, EventState, RunStatus
from tarry.store import open_store

pytestmark = pytest.mark.slow

MANIFESTS = parse_manifests("""
events:
  race.reply:
    correlate_on: [key]
    buffer: 1m
""", "events.yaml")

FLOW = """
flow: race
inputs:
  key: { type: string, required: true }
  delay: { type: duration, default: 0s }
steps:
  - before:
      wait: { for: "{{ delay }}" }
  - reply:
      wait_for: race.reply
      match: { key: "{{ key }}" }
      timeout: 1m
  - received:
      if: "{{ reply.status == 'received' }}"
      exit: received
  - escalated:
      exit: escalated
"""

SETTLE_SECONDS = 20.0
"""How long the runs may take to finish once every event was sent (they take well under 1 s)."""


def make_engine(store_url: str, directory: Path) -> Engine:
    """An engine with a store of its own on the shared database, on the real clock."""
    actions = ActionRegistry()
    register_builtins(actions)
    store = open_store(store_url)
    return Engine(store, FlowCatalog(directory, store, actions.names(), MANIFESTS), actions,
                  SystemClock(), MANIFESTS)


@pytest.fixture
def engines(store_url: str, tmp_path: Path) -> Iterator[Callable[[], Engine]]:
    """Opens engines on the test's database; closes them at the end."""
    opened: list[Engine] = []

    def open_engine() -> Engine:
        opened.append(make_engine(store_url, tmp_path))
        return opened[-1]

    yield open_engine
    for engine in opened:
        engine.close()


@contextmanager
def workers(engines: Callable[[], Engine], count: int) -> Iterator[None]:
    """``count`` workers, each in a thread of its own with its own engine, until the block
    ends (then they stop as on SIGTERM: runs in flight finish first)."""
    loops: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
    crashed: list[BaseException] = []
    ready = threading.Barrier(count + 1)

    def work(engine: Engine) -> None:
        async def main() -> None:
            stop = asyncio.Event()
            loops.append((asyncio.get_running_loop(), stop))
            ready.wait()
            await engine.worker(concurrency=16).run(stop)

        try:
            asyncio.run(main())
        except BaseException as exc:
            crashed.append(exc)

    threads = [threading.Thread(target=work, args=(engines(),)) for _ in range(count)]
    for thread in threads:
        thread.start()
    ready.wait()
    try:
        yield
    finally:
        for loop, stop in loops:
            if not loop.is_closed():
                loop.call_soon_threadsafe(stop.set)
        for thread in threads:
            thread.join(30)
    assert not crashed, f"a worker stopped with {crashed[0]!r}"


def send_all(engines: Callable[[], Engine], senders: int,
             events: list[tuple[str, dict[str, Any]]], *,
             jitter: float = 0.0) -> list[EventRecord]:
    """Send ``events`` (id, payload) from ``senders`` threads, each with its own engine,
    each at a random instant within ``jitter`` seconds from now; the records, in order."""
    per_sender = [engines() for _ in range(senders)]
    rng = random.Random(7)
    began = time.monotonic()
    offsets = sorted(rng.uniform(0, jitter) for _ in events)

    def send(index: int) -> EventRecord:
        time.sleep(max(began + offsets[index] - time.monotonic(), 0))
        event_id, data = events[index]
        return per_sender[index % senders].send("race.reply", data, id=event_id)

    with ThreadPoolExecutor(max_workers=senders) as pool:
        return list(pool.map(send, range(len(events))))


def wait_for_runs(engine: Engine, run_ids: list[str]) -> None:
    """Return when every run ended; fail after SETTLE_SECONDS."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        if all(engine.store.get_run(run_id).status.is_terminal for run_id in run_ids):
            return
        time.sleep(0.02)
    unfinished = [run_id for run_id in run_ids
                  if not engine.store.get_run(run_id).status.is_terminal]
    pytest.fail(f"{len(unfinished)} runs still unfinished after {SETTLE_SECONDS}s")


def received_events(engine: Engine, run_id: str) -> list[str]:
    """The ids of the events a run's history says it received."""
    return [entry.data["event_id"] for entry in engine.store.history(run_id)
            if entry.kind == "event.received"]


def race_flow(engine: Engine) -> Flow:
    """The flow every run of these tests follows, loaded for ``engine``."""
    return parse_flow(FLOW, "race.yaml", actions=engine.actions.names(), manifests=MANIFESTS)


def test_concurrent_senders_and_waiting_runs_lose_nothing_and_deliver_nothing_twice(
        engines: Callable[[], Engine]) -> None:
    main = engines()
    flow = race_flow(main)
    rng = random.Random(11)
    early = [f"early-{index}" for index in range(30)]       # sent before their run exists
    racing = [f"racing-{index}" for index in range(200)]    # sent while runs register waits
    after = [f"after-{index}" for index in range(20)]       # sent once their run waits
    strays = [f"nobody-{index}" for index in range(20)]     # no run waits for these
    event = {key: (f"event-{key}", {"key": key}) for key in early + racing + after + strays}

    sent_early = send_all(engines, 2, [event[key] for key in early])
    assert {record.state for record in sent_early} == {EventState.BUFFERED}
    run_of = {key: main.start(flow, {"key": key, "delay": f"{rng.randrange(0, 400)}ms"}).id
              for key in early + racing + after}
    with workers(engines, 3):
        sent = send_all(engines, 4, [event[key] for key in racing + strays], jitter=0.6)
        wait_for_waiting(main, [run_of[key] for key in after])
        sent += send_all(engines, 2, [event[key] for key in after])
        wait_for_runs(main, list(run_of.values()))

    state_at_send = {record.id: record.state for record in sent}
    assert {state_at_send[event[key][0]] for key in after} == {EventState.DELIVERED}
    assert {state_at_send[event[key][0]] for key in racing} <= {EventState.DELIVERED,
                                                                EventState.BUFFERED}
    for key, run_id in run_of.items():
        stored = main.store.get_event(event[key][0])
        assert (stored.state, stored.runs) == (EventState.DELIVERED, (run_id,)), key
        assert received_events(main, run_id) == [event[key][0]], key
        record = main.store.get_run(run_id)
        assert (record.status, record.exit) == (RunStatus.SUCCEEDED, "received"), key
    for key in strays:
        stored = main.store.get_event(event[key][0])
        assert (stored.state, stored.runs) == (EventState.BUFFERED, ()), key


def test_the_same_event_sent_at_once_by_many_senders_is_delivered_once(
        engines: Callable[[], Engine]) -> None:
    main = engines()
    flow = race_flow(main)
    run_ids = [main.start(flow, {"key": f"dup-{index}"}).id for index in range(10)]
    with workers(engines, 2):
        wait_for_waiting(main, run_ids)
        barrier = threading.Barrier(8)
        senders = [engines() for _ in range(8)]

        def send_each(engine: Engine) -> list[EventRecord]:
            barrier.wait()
            return [engine.send("race.reply", {"key": f"dup-{index}"}, id=f"dup-{index}")
                    for index in range(10)]

        with ThreadPoolExecutor(max_workers=8) as pool:
            results = [record for batch in pool.map(send_each, senders) for record in batch]
        wait_for_runs(main, run_ids)

    for index, run_id in enumerate(run_ids):
        event_id = f"dup-{index}"
        states = sorted(record.state.value for record in results if record.id == event_id)
        assert states == ["delivered"] + ["duplicate"] * 7, event_id
        assert received_events(main, run_id) == [event_id]


def wait_for_waiting(engine: Engine, run_ids: list[str]) -> None:
    """Return when every run is suspended on its event wait."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        records = [engine.store.get_run(run_id) for run_id in run_ids]
        if all(record.status is RunStatus.WAITING and record.waiting_for is not None
               and record.waiting_for["kind"] == "event" for record in records):
            return
        time.sleep(0.02)
    pytest.fail("the runs did not reach their wait")

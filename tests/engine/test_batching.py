"""Group commit (tarry.engine.batching.Batcher): which items share a write, and how many
writes are in flight at once."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from tarry.engine.batching import Batcher, Gather


class Writes:
    """A batch writer that records each batch and holds it until :meth:`finish` lets it
    return (each item's result: the item doubled; ``"bad"`` fails alone)."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self._open: list[asyncio.Event] = []

    async def write(self, batch: list[str]) -> Sequence[str | BaseException]:
        self.batches.append(batch)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        gate = asyncio.Event()
        self._open.append(gate)
        await gate.wait()
        self.in_flight -= 1
        return [ValueError(item) if item == "bad" else item * 2 for item in batch]

    async def started(self, index: int) -> None:
        """Return once the ``index``-th write has begun."""
        while len(self.batches) <= index:
            await asyncio.sleep(0)

    async def finish(self, index: int) -> None:
        """Let the ``index``-th write return, and the loop come round."""
        await _turns()
        assert len(self._open) > index, f"write {index} never began"
        self._open[index].set()
        await _turns()


async def _turns() -> None:
    """Let the loop come round a few times: every task ready runs as far as it can."""
    for _ in range(4):
        await asyncio.sleep(0)


async def _submitted(batcher: Batcher[str, str], *items: str) -> list[asyncio.Task[str]]:
    """Submit ``items`` in one moment; return once the batcher has taken them up."""
    tasks = [asyncio.create_task(batcher.submit(item)) for item in items]
    await _turns()
    return tasks


async def test_items_submitted_in_the_same_moment_share_one_write() -> None:
    writes = Writes()
    batcher = Batcher(writes.write)
    tasks = await _submitted(batcher, "a", "b", "c")
    await writes.finish(0)
    assert [task.result() for task in tasks] == ["aa", "bb", "cc"]
    assert writes.batches == [["a", "b", "c"]]


async def test_with_one_writer_items_submitted_meanwhile_wait_for_the_next_write() -> None:
    writes = Writes()
    batcher = Batcher(writes.write)
    first = await _submitted(batcher, "a")
    later = await _submitted(batcher, "b", "c")
    assert writes.batches == [["a"]]  # b and c wait while a is written
    await writes.finish(0)
    await writes.finish(1)
    assert [task.result() for task in first + later] == ["aa", "bb", "cc"]
    assert (writes.batches, writes.most_in_flight) == ([["a"], ["b", "c"]], 1)


async def test_with_two_writers_a_second_batch_goes_out_beside_the_first() -> None:
    writes = Writes()
    batcher = Batcher(writes.write, writers=2)
    await _submitted(batcher, "a")
    await _submitted(batcher, "b")
    gathered = await _submitted(batcher, "c", "d")  # both writers busy: these gather
    assert writes.batches == [["a"], ["b"]]
    await writes.finish(1)  # the second finishes first and takes what gathered
    assert writes.batches == [["a"], ["b"], ["c", "d"]]
    await writes.finish(0)
    await writes.finish(2)
    assert [task.result() for task in gathered] == ["cc", "dd"]
    assert writes.most_in_flight == 2


async def test_an_item_submitted_as_its_submitter_learns_a_result_is_written() -> None:
    # The writer that wrote "a" has just found nothing pending when "a"'s submitter goes on
    # to submit "b": "b" must start a writer of its own, not wait for one that has ended.
    writes = Writes()
    batcher = Batcher(writes.write)

    async def one_then_another() -> str:
        await batcher.submit("a")
        return await batcher.submit("b")

    chained = asyncio.create_task(one_then_another())
    await writes.finish(0)
    await writes.finish(1)
    assert await asyncio.wait_for(chained, 1) == "bb"


async def test_one_items_failure_is_its_own() -> None:
    writes = Writes()
    batcher = Batcher(writes.write)
    good, bad = await _submitted(batcher, "a", "bad")
    await writes.finish(0)
    assert good.result() == "aa"
    with pytest.raises(ValueError, match=r"^bad$"):
        bad.result()


async def test_a_writer_that_fails_as_a_whole_fails_every_item_of_its_batch() -> None:
    async def broken(batch: list[str]) -> Sequence[str | BaseException]:
        raise OSError("disk gone")

    batcher = Batcher(broken)
    tasks = await _submitted(batcher, "a", "b")
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert [str(result) for result in results] == ["disk gone", "disk gone"]


def test_a_batcher_needs_at_least_one_writer() -> None:
    async def write(batch: list[str]) -> Sequence[str | BaseException]:
        return batch

    with pytest.raises(ValueError, match=r"^writers must be at least 1$"):
        Batcher(write, writers=0)


class Contended:
    """A :class:`Gather` condition the test sets: whether the last write waited."""

    def __init__(self, waited: bool) -> None:
        self.waited = waited
        self.asked = 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.waited


async def test_after_a_write_that_waited_a_batch_gathers_until_enough_items_wait() -> None:
    writes = Writes()
    batcher = Batcher(writes.write, gather=Gather(when=Contended(True), seconds=3600,
                                                  enough=3))
    first = await _submitted(batcher, "a")
    assert writes.batches == []  # gathering: a waits for company
    later = await _submitted(batcher, "b", "c")  # three wait: the batch goes at once
    assert writes.batches == [["a", "b", "c"]]
    await writes.finish(0)
    assert [task.result() for task in first + later] == ["aa", "bb", "cc"]


async def test_a_gathering_batch_goes_when_its_time_is_up() -> None:
    writes = Writes()
    batcher = Batcher(writes.write, gather=Gather(when=Contended(True), seconds=0.001,
                                                  enough=100))
    task = (await _submitted(batcher, "a"))[0]
    await asyncio.wait_for(writes.started(0), 1)
    await writes.finish(0)
    assert (task.result(), writes.batches) == ("aa", [["a"]])


async def test_without_a_write_that_waited_a_batch_goes_at_once() -> None:
    writes = Writes()
    contended = Contended(False)
    batcher = Batcher(writes.write, gather=Gather(when=contended, seconds=3600, enough=3))
    await _submitted(batcher, "a")
    assert (writes.batches, contended.asked) == ([["a"]], 1)


async def test_a_batch_of_enough_items_goes_without_asking_whether_to_gather() -> None:
    writes = Writes()
    contended = Contended(True)
    batcher = Batcher(writes.write, gather=Gather(when=contended, seconds=3600, enough=2))
    await _submitted(batcher, "a", "b")
    assert (writes.batches, contended.asked) == ([["a", "b"]], 0)

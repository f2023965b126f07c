"""for_each branches run at the same time: their actions overlap and share checkpoints; a walk
that ends right after results came in takes them into the run's final write."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext
from tarry.model import CheckpointOutcome, RunStatus, RunUpdate
from tarry.testing import Harness

FANOUT = """
flow: fanout
steps:
  - calls:
      for_each: [1, 2, 3, 4, 5, 6, 7, 8]
      concurrency: 8
      steps:
        - call: { rendezvous: { n: "{{ item }}" } }
  - after: { noop: {} }
"""

LAST = """
flow: last
steps:
  - first: { noop: {} }
  - second: { noop: {} }
"""


async def _noop(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    return {}


def _count_intermediate(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of runs in each checkpoint that keeps its lease, as they are written."""
    written: list[int] = []
    checkpoint = harness.engine.store.checkpoint

    def counting(worker: str, now: Any, updates: list[RunUpdate]
                 ) -> dict[str, CheckpointOutcome]:
        written.extend(1 for update in updates if not update.release)
        return checkpoint(worker, now, updates)

    monkeypatch.setattr(harness.engine.store, "checkpoint", counting)
    return written


async def test_concurrent_branches_overlap_their_actions_and_share_checkpoints(
        tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    inside = 0
    everyone_in = asyncio.Event()

    async def rendezvous(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        nonlocal inside
        inside += 1
        if inside == 8:
            everyone_in.set()
        await asyncio.wait_for(everyone_in.wait(), timeout=5)  # only if all 8 run at once
        return {"n": args["n"]}

    actions = {"rendezvous": rendezvous, "noop": _noop}
    with Harness(tmp_path, actions=actions, store_url=store_url) as harness:
        written = _count_intermediate(harness, monkeypatch)
        run_id = harness.start(harness.flow(FANOUT))
        await harness.run_until_idle()
        document = harness.document(run_id)
        assert document["status"] == RunStatus.SUCCEEDED
        assert [scope["call"]["n"] for scope in document["bindings"]["calls"]] == list(range(1, 9))
        assert len(written) == 1  # eight actions finished together: one intermediate checkpoint


async def test_results_are_saved_before_the_next_action_and_the_last_with_the_end(
        tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with Harness(tmp_path, actions={"noop": _noop}, store_url=store_url) as harness:
        written = _count_intermediate(harness, monkeypatch)
        run_id = harness.start(harness.flow(LAST))
        await harness.run_until_idle()
        assert harness.document(run_id)["status"] == RunStatus.SUCCEEDED
        assert harness.history_kinds(run_id).count("step.completed") == 2
    assert len(written) == 1  # first's result, before second ran; second's in the final write


PAIR = """
flow: pair
steps:
  - alone: { where: {} }
  - both:
      for_each: [1, 2]
      concurrency: 2
      steps:
        - each: { where: {} }
"""


async def test_a_lone_action_runs_in_its_runs_task_and_concurrent_ones_in_their_own(
        tmp_path: Path, store_url: str) -> None:
    """A lone action is awaited at once, so that runs woken together do not each wait for
    all the others' walks before their first action (a burst's first wake); actions that run
    beside each other each get a task."""
    ran_in: list[str] = []

    async def where(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        task = asyncio.current_task()
        assert task is not None
        ran_in.append(task.get_coro().__qualname__)
        return {}

    with Harness(tmp_path, actions={"where": where}, store_url=store_url) as harness:
        run_id = harness.start(harness.flow(PAIR))
        await harness.run_until_idle()
        assert harness.document(run_id)["status"] == RunStatus.SUCCEEDED
    assert ran_in == ["Worker.execute", "timed_call", "timed_call"]

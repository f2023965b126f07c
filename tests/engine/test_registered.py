"""A release notes in the run's state whether it has event waits and open tasks now, so the
next release's store lookups are only of what may exist (a timer's wake looks up neither)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry.model import CheckpointOutcome, NewRun, RunStatus, RunUpdate
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

FLOW = """\
flow: mixed
steps:
  - nap: { wait: { for: 1h } }
  - reply:
      wait_for: order.reply
      match: { order: "o1" }
      timeout: 1d
  - ok:
      ask: { title: "Go?", outcomes: [go, stop] }
      timeout: 1h
  - rest: { wait: { for: 1h } }
"""


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    h = Harness(tmp_path, start=START, store_url=store_url,
                manifests="events:\n  order.reply: { correlate_on: [order] }\n")
    yield h
    h.close()


def _releases(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> list[RunUpdate]:
    """Every releasing update the worker writes from now on (the real store writes it)."""
    released: list[RunUpdate] = []
    checkpoint = harness.engine.store.checkpoint

    def watched(worker: str, now: Any, updates: list[RunUpdate]
                ) -> dict[str, CheckpointOutcome]:
        released.extend(update for update in updates if update.release)
        return checkpoint(worker, now, updates)

    monkeypatch.setattr(harness.engine.store, "checkpoint", watched)
    return released


async def test_each_release_says_what_the_run_had_registered_before_it(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    released = _releases(harness, monkeypatch)
    run_id = harness.start(harness.flow(FLOW))
    await harness.run_due()  # pending, never ran: nothing registered; waits on the timer
    await harness.advance(timedelta(hours=1))  # timer only: still nothing; registers the wait
    harness.send("order.reply", {"order": "o1"})
    await harness.run_due()  # had the event wait; opens the task
    [task] = harness.engine.tasks()
    harness.engine.complete_task(task.id, outcome="go", by="alice")
    await harness.run_due()  # had the task; waits on the last timer
    await harness.advance(timedelta(hours=1))  # the timer again: nothing registered
    assert [(u.had_waits, u.had_tasks) for u in released] == [
        (False, False), (False, False), (True, False), (False, True), (False, False)]
    assert harness.document(run_id)["status"] == "succeeded"
    assert harness.record(run_id).state["registered"] == {"waits": False, "tasks": False}


async def test_a_state_without_the_note_is_taken_to_have_both(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    first = harness.record(harness.start(harness.flow(FLOW)))
    await harness.run_due()
    waiting = harness.record(first.id)
    older = {key: value for key, value in waiting.state.items() if key != "registered"}
    harness.engine.store.create_run(NewRun(  # the same wait, as an older tarry left it
        id="older", flow=first.flow, flow_digest=first.flow_digest, status=RunStatus.WAITING,
        inputs={}, target=None, created_at=START, due_at=START + timedelta(hours=1),
        state=older, waiting_for=waiting.waiting_for), [])
    released = _releases(harness, monkeypatch)
    await harness.advance(timedelta(hours=1))
    assert {u.run_id: (u.had_waits, u.had_tasks) for u in released} == {
        first.id: (False, False), "older": (True, True)}
    assert harness.record("older").state["registered"] == {"waits": True, "tasks": False}

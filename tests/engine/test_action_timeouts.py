"""Action timeouts and heartbeats through the real engine on a virtual clock, on both stores:
a hung async action is cancelled at its step's timeout and its retry runs; a hung sync action
is abandoned in its thread while the worker carries on with other runs, and what its thread
does afterwards reaches nothing; a heartbeat holds an action to a lease's silence and keeps a
long one going; the default comes from ``[limits] action_timeout``."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext, StepFailure
from tarry.config import load_settings
from tarry.engine.builtins import http_request
from tarry.model import RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
LEASE = timedelta(seconds=30)  # the harness's worker's lease

HUNG = """
flow: hung
steps:
  - call:
      hang: {}
      timeout: 2m
      retry: { max: 1, every: 10s }
"""


async def _until(condition: Callable[[], bool], what: str) -> None:
    """Let the loop (and actions' threads) run until ``condition`` holds."""
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"gave up waiting for {what}")


async def _while_running(harness: Harness, during: Callable[[], Awaitable[None]]) -> None:
    """Execute what is due now, doing ``during`` (moving the clock) while it runs."""
    running = asyncio.create_task(harness.run_due())
    await during()
    await asyncio.wait_for(running, 10)


async def test_a_hung_async_action_is_cancelled_at_its_timeout_and_its_retry_runs(
        tmp_path: Path, store_url: str) -> None:
    attempts: list[int] = []
    cancelled: list[int] = []

    async def hang(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        attempts.append(ctx.attempt)
        if ctx.attempt == 1:
            try:
                await asyncio.Event().wait()  # never set
            except asyncio.CancelledError:
                cancelled.append(ctx.attempt)
                raise
        return {"attempt": ctx.attempt}

    with Harness(tmp_path, start=START, store_url=store_url, actions={"hang": hang}) as h:
        run_id = h.start(h.flow(HUNG))

        async def past_the_timeout() -> None:
            await _until(lambda: attempts == [1], "the first attempt")
            h.clock.advance(timedelta(minutes=2) - timedelta(milliseconds=1))
            await asyncio.sleep(0.05)
            assert cancelled == []  # not a millisecond early
            h.clock.advance(timedelta(milliseconds=1))

        await _while_running(h, past_the_timeout)
        assert cancelled == [1]
        retrying = [e for e in h.engine.store.history(run_id) if e.kind == "step.retrying"]
        assert retrying[0].data["error"] == {
            "type": "timeout", "message": "the action did not finish within its timeout (2m)"}
        await h.run_until_idle()
        assert attempts == [1, 2]
        assert h.document(run_id)["status"] == RunStatus.SUCCEEDED


SYNC = """
flow: stuck
steps:
  - call:
      block: {}
      timeout: 1m
"""
QUICK = """
flow: quick
steps:
  - call:
      quick: {}
"""


async def test_a_hung_sync_action_is_abandoned_and_its_thread_reaches_nothing_later(
        tmp_path: Path, store_url: str) -> None:
    release, returned = threading.Event(), threading.Event()
    started: list[str] = []

    def block(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        started.append(threading.current_thread().name)
        release.wait(10)  # hung, as far as the worker can tell
        ctx.note("written after it was abandoned")
        ctx.heartbeat({"late": True})
        returned.set()
        return {"late": True}

    quick_done: list[str] = []

    def quick(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        quick_done.append(ctx.run_id)
        return {"ok": True}

    with Harness(tmp_path, start=START, store_url=store_url,
                 actions={"block": block, "quick": quick}) as h:
        stuck = h.start(h.flow(SYNC))

        async def others_meanwhile_then_timeout() -> None:
            await _until(lambda: bool(started), "the sync action to start")
            other = h.start(h.flow(QUICK))
            await h.run_due()  # the worker carries on with another run beside the hung one
            assert quick_done == [other]
            assert h.record(other).status is RunStatus.SUCCEEDED
            h.clock.advance(timedelta(minutes=1))

        await _while_running(h, others_meanwhile_then_timeout)
        record = h.record(stuck)
        assert record.status is RunStatus.FAILED
        assert record.error == {"type": "timeout", "step": "call", "message":
                                "the action did not finish within its timeout (1m)"}
        history_before = h.engine.store.history(stuck)
        release.set()  # the abandoned thread now finishes, writes a note and returns
        await asyncio.to_thread(returned.wait, 5)
        await asyncio.sleep(0.05)  # what it handed to the loop has had its turn
        assert h.engine.store.history(stuck) == history_before
        assert h.record(stuck).status is RunStatus.FAILED
        assert not any(e.kind == "log" for e in history_before)
        assert started[0] == "tarry-call"  # not a thread of the loop's default pool


BEATING = """
flow: long
steps:
  - call:
      long: {}
      timeout: 10m
"""


async def test_a_heartbeating_action_runs_past_several_leases_and_one_gone_silent_ends(
        tmp_path: Path, store_url: str) -> None:
    beat, finish = asyncio.Event(), asyncio.Event()
    calls: list[str] = []

    async def long(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        calls.append(ctx.run_id)
        page = 0
        while not finish.is_set():
            await beat.wait()
            beat.clear()
            page += 1
            ctx.heartbeat({"page": page})
        return {"pages": page}

    with Harness(tmp_path, start=START, store_url=store_url, actions={"long": long}) as h:
        kept, silent = h.start(h.flow(BEATING)), None

        async def four_leases_with_heartbeats() -> None:
            await _until(lambda: len(calls) == 1, "the action to start")
            for _ in range(8):  # four leases' time, a heartbeat every half lease
                beat.set()
                await _until(lambda: not beat.is_set(), "the heartbeat")
                h.clock.advance(LEASE / 2)
                await asyncio.sleep(0.01)
            finish.set()
            beat.set()

        await _while_running(h, four_leases_with_heartbeats)
        assert h.record(kept).status is RunStatus.SUCCEEDED
        assert h.document(kept)["bindings"]["call"] == {"pages": 9}

        finish.clear()
        silent = h.start(h.flow(BEATING))

        async def one_heartbeat_then_silence() -> None:
            await _until(lambda: len(calls) == 2, "the action to start")
            beat.set()
            await _until(lambda: not beat.is_set(), "the heartbeat")
            await asyncio.sleep(0.01)
            h.clock.advance(LEASE)  # a whole lease with no heartbeat: well before 10m

        await _while_running(h, one_heartbeat_then_silence)
        record = h.record(silent)
        assert record.status is RunStatus.FAILED
        assert record.error == {"type": "timeout", "step": "call", "message": (
            "the action sent no heartbeat for 30s (the worker's lease) after its last one; "
            'last heartbeat: {"page": 1}')}


DEFAULTED = """
flow: defaulted
steps:
  - call:
      hang: {}
"""


async def test_a_step_without_a_timeout_has_the_configured_default(
        tmp_path: Path, store_url: str) -> None:
    started = asyncio.Event()
    ended: list[datetime] = []

    async def hang(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        assert ctx.timeout == timedelta(seconds=90)
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            ended.append(h.clock.now())
        return {}

    root = tmp_path / "project"
    root.mkdir()
    (root / "tarry.toml").write_text('[limits]\naction_timeout = "90s"\n', encoding="utf-8")
    project = load_settings(cwd=root, env={})
    with Harness(tmp_path, start=START, store_url=store_url, actions={"hang": hang},
                 project=project) as h:
        run_id = h.start(h.flow(DEFAULTED))

        async def past_the_default() -> None:
            await started.wait()
            h.clock.advance(timedelta(seconds=89))
            await asyncio.sleep(0.05)
            assert ended == []
            h.clock.advance(timedelta(seconds=1))

        await _while_running(h, past_the_default)
        assert ended == [START + timedelta(seconds=90)]
        assert h.record(run_id).error == {
            "type": "timeout", "step": "call",
            "message": "the action did not finish within its timeout (1m30s)"}


async def test_an_action_that_swallows_its_cancellation_still_fails_its_step(
        tmp_path: Path, store_url: str) -> None:
    started = asyncio.Event()

    async def hang(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        started.set()
        with contextlib.suppress(asyncio.CancelledError):  # and returns a result, too late
            await asyncio.Event().wait()
        return {"late": True}

    with Harness(tmp_path, start=START, store_url=store_url, actions={"hang": hang}) as h:
        run_id = h.start(h.flow(SYNC.replace("block", "hang")))

        async def past_the_timeout() -> None:
            await started.wait()
            h.clock.advance(timedelta(minutes=1))

        await _while_running(h, past_the_timeout)
        assert h.record(run_id).error is not None
        assert h.record(run_id).error["type"] == "timeout"  # type: ignore[index]
        assert "call" not in h.document(run_id)["bindings"]


async def test_http_requests_own_timeout_is_capped_by_the_steps() -> None:
    with socket.socket() as silent:  # accepts, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        ctx = ActionContext(run_id="r1", step_path="call", attempt=1, idempotency_key="k",
                            now=START, timeout=timedelta(milliseconds=200))
        began = asyncio.get_running_loop().time()
        with pytest.raises(StepFailure) as failed:
            await http_request({"url": f"http://127.0.0.1:{port}/", "timeout": 30}, ctx)
        assert failed.value.type == "http"
        assert asyncio.get_running_loop().time() - began < 5  # not its own 30 s


async def test_a_sync_actions_notes_reach_the_history_in_order_while_it_runs(
        tmp_path: Path, store_url: str) -> None:
    def chatty(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        for line in range(3):
            ctx.note(f"line {line}")
        return {"lines": 3}

    with Harness(tmp_path, start=START, store_url=store_url, actions={"chatty": chatty}) as h:
        run_id = h.start(h.flow(QUICK.replace("quick", "chatty")))
        await h.run_until_idle()
        history = h.engine.store.history(run_id)
        assert [(e.kind, e.data.get("message")) for e in history
                if e.kind in ("log", "step.completed")] == [
            ("log", "line 0"), ("log", "line 1"), ("log", "line 2"), ("step.completed", None)]

"""Hostile actions in one process: an action (or a Python flow's step) that raises an
exception of any kind — ``SystemExit``, ``KeyboardInterrupt``, a bare ``BaseException``
subclass, sync in a thread or async on the loop — fails its step once with a recorded error,
and the worker carries on: the 20 good runs beside it finish. On both stores."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tarry import App, CheckContext, Context
from tarry.actions import ActionContext
from tarry.model import RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class Bare(BaseException):
    """An exception class outside ``Exception``'s hierarchy."""


RAISED: dict[str, tuple[Callable[[], BaseException], str]] = {
    "SystemExit": (lambda: SystemExit(2), "SystemExit: 2"),
    "KeyboardInterrupt": (lambda: KeyboardInterrupt("stop"), "KeyboardInterrupt: stop"),
    "BaseException": (lambda: Bare("odd"), "Bare: odd"),
}

FLOW = """
flow: hostile
steps:
  - call:
      raiser: {}
"""
GOOD = """
flow: good
steps:
  - call:
      fine: {}
"""


@pytest.fixture(params=sorted(RAISED))
def raised(request: pytest.FixtureRequest) -> tuple[Callable[[], BaseException], str]:
    return RAISED[request.param]


@pytest.fixture(params=["sync", "async"])
def raiser(request: pytest.FixtureRequest,
           raised: tuple[Callable[[], BaseException], str]) -> Callable[..., Any]:
    calls: list[str] = []

    def sync(_args: dict[str, Any], ctx: ActionContext) -> None:
        calls.append(ctx.run_id)
        raise raised[0]()

    async def in_loop(_args: dict[str, Any], ctx: ActionContext) -> None:
        sync(_args, ctx)

    chosen = sync if request.param == "sync" else in_loop
    chosen.calls = calls  # type: ignore[attr-defined]
    return chosen


@pytest.fixture
def harness(tmp_path: Path, store_url: str, raiser: Callable[..., Any]) -> Iterator[Harness]:
    actions = {"raiser": raiser, "fine": lambda _args, _ctx: {"ok": True}}
    with Harness(tmp_path, start=START, actions=actions, store_url=store_url) as h:
        yield h


async def test_an_action_raising_any_exception_fails_its_step_once(
        harness: Harness, raiser: Any, raised: tuple[Callable[[], BaseException], str]) -> None:
    good = [harness.start(harness.flow(GOOD, "good.yaml")) for _ in range(20)]
    bad = harness.start(harness.flow(FLOW))
    await harness.run_until_idle()
    record = harness.record(bad)
    assert (record.status, record.error) == (RunStatus.FAILED, {
        "type": "action-error", "step": "call", "message": raised[1]})
    assert raiser.calls == [bad]
    assert harness.history_kinds(bad).count("failed") == 1
    assert {harness.record(run).status for run in good} == {RunStatus.SUCCEEDED}


async def test_a_python_step_raising_any_exception_fails_once_and_the_flow_sees_it(
        tmp_path: Path, store_url: str, raiser: Any,
        raised: tuple[Callable[[], BaseException], str]) -> None:
    app = App()

    @app.flow("stepping")
    async def stepping(ctx: Context) -> str:
        try:
            await ctx.step("exits", raiser, {}, _context(ctx))
        except Exception as error:
            return f"caught {type(error).__name__}: {error}"
        return "not raised"

    with Harness(tmp_path, start=START, app=app, store_url=store_url) as harness:
        run_id = harness.start("stepping")
        await harness.run_until_idle()
        record = harness.record(run_id)
    kind, _, message = raised[1].partition(": ")
    assert record.result == f"caught StepError: step 'exits' raised {kind}: {message}"
    assert raiser.calls == ["stepping-run"]


async def test_a_python_flow_raising_any_exception_fails_its_run(
        tmp_path: Path, store_url: str, raised: tuple[Callable[[], BaseException], str]) -> None:
    app = App()

    @app.flow("exiting")
    async def exiting(ctx: Context) -> None:
        raise raised[0]()

    with Harness(tmp_path, start=START, app=app, store_url=store_url) as harness:
        run_id = harness.start("exiting")
        await harness.run_until_idle()
        record = harness.record(run_id)
    assert (record.status, record.error) == (RunStatus.FAILED, {
        "type": "exception", "step": None, "message": raised[1]})


async def test_a_condition_check_raising_any_exception_fails_once_and_the_flow_sees_it(
        tmp_path: Path, store_url: str, raised: tuple[Callable[[], BaseException], str]) -> None:
    app = App()
    calls: list[int] = []

    def check(_state: bool, check_ctx: CheckContext) -> bool:
        calls.append(check_ctx.attempt)
        raise raised[0]()

    @app.flow("polling")
    async def polling(ctx: Context) -> str:
        try:
            await ctx.wait_for_condition("poll", check=check, initial_state=False)
        except Exception as error:
            return f"caught {type(error).__name__}: {error}"
        return "met"

    with Harness(tmp_path, start=START, app=app, store_url=store_url) as harness:
        run_id = harness.start("polling")
        await harness.run_until_idle()
        record = harness.record(run_id)
    kind, _, message = raised[1].partition(": ")
    assert record.result == f"caught StepError: step 'poll' raised {kind}: {message}"
    assert calls == [1]


async def test_a_python_flow_branch_raising_any_exception_fails_its_run(
        tmp_path: Path, store_url: str, raised: tuple[Callable[[], BaseException], str]) -> None:
    app = App()

    async def fine(ctx: Context) -> int:
        return 1

    async def exits(ctx: Context) -> int:
        raise raised[0]()

    @app.flow("branching")
    async def branching(ctx: Context) -> list[int]:
        return await ctx.parallel(fine, exits, name="both")

    with Harness(tmp_path, start=START, app=app, store_url=store_url) as harness:
        run_id = harness.start("branching")
        await harness.run_until_idle()
        record = harness.record(run_id)
    assert (record.status, record.error) == (RunStatus.FAILED, {
        "type": "exception", "step": None, "message": raised[1]})


def _context(ctx: Context) -> ActionContext:
    """An action context for calling an action's function as a Python step."""
    return ActionContext(run_id="stepping-run", step_path="exits", attempt=1,
                         idempotency_key="k", now=START)

"""``ctx.patched`` and ``ctx.deprecate_patch``: a flow's code changes under runs waiting at
every kind of wait, and each run keeps the path it recorded.

Version 1 charges with ``charge``; version 2 charges with ``charge-with-tax`` behind
``ctx.patched("tax")``, keeping the old code for the runs recorded before it; version 3
drops the old code with ``ctx.deprecate_patch("tax")``. Each run waits right after charging
(a timer, an event, a polled condition, a task for a person, or a timer in a ``parallel``
branch whose code holds the patch), while the code is swapped under it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from sdk_support import HarnessFor, exactly

from tarry import App, CheckContext, Context, NondeterminismError, WaitStrategy
from tarry.model import RunStatus
from tarry.sdk.patches import checked_patch_id
from tarry.testing import Harness

KINDS = ["timer", "event", "poll", "ask", "parallel"]


async def _wait(ctx: Context, kind: str, order: str) -> None:
    """The wait a run of ``kind`` stops at, right after it charged."""
    if kind in ("timer", "parallel"):
        await ctx.wait("pause", "1d")
    elif kind == "event":
        await ctx.wait_for_event("approval", "slack.approval", match={"message": order},
                                 timeout="2d")
    elif kind == "poll":
        await ctx.wait_for_condition("settled", check=_second_time, initial_state=False,
                                     strategy=WaitStrategy.fixed("1h"))
    else:
        await ctx.ask("review", title=f"Review {order}", outcomes=["ok"], timeout="2d")


def _second_time(state: bool, check: CheckContext) -> bool:
    return check.attempt >= 2


async def _charge(ctx: Context, version: int) -> str:
    """The code that changes: which step charges, by version."""
    if version == 1:
        return str(await ctx.step("charge", lambda: "old"))
    if version == 2:
        if ctx.patched("tax"):
            return str(await ctx.step("charge-with-tax", lambda: "new"))
        return str(await ctx.step("charge", lambda: "old"))
    ctx.deprecate_patch("tax")
    return str(await ctx.step("charge-with-tax", lambda: "new"))


def order_app(version: int, kind: str) -> App:
    """The flow ``order`` at ``version``, waiting as ``kind`` says."""
    app = App()

    async def body(ctx: Context, order: str) -> str:
        path = await _charge(ctx, version)
        await _wait(ctx, kind, order)
        return path

    @app.flow("order")
    async def run_order(ctx: Context, order: str) -> str:
        await ctx.step("reserve", lambda: "R1")
        if kind == "parallel":
            paths = await ctx.parallel(lambda branch: body(branch, order),
                                       lambda branch: branch.step("lookup", lambda: "x"),
                                       name="fan")
            path = str(paths[0])
        else:
            path = await body(ctx, order)
        await ctx.step("ship", lambda: path)
        return path

    return app


Resume = Callable[[Harness, str, str], Awaitable[None]]


async def _resume(harness: Harness, kind: str, run_id: str, order: str) -> None:
    """Give the run what it waits for, as the world would."""
    if kind == "event":
        harness.send("slack.approval", {"message": order})
    elif kind == "ask":
        harness.complete_task(run_id, "review", outcome="ok")


async def _finish(harness: Harness, kind: str, runs: dict[str, str]) -> None:
    """Resume every run (order → run id) to its end."""
    for order, run_id in runs.items():
        await _resume(harness, kind, run_id, order)
    await harness.run_until_idle()


def _swap(previous: Harness, harness_for: HarnessFor, app: App) -> Harness:
    """A harness running ``app`` on the same store, at the previous one's instant."""
    harness = harness_for(app)
    harness.clock.set(previous.clock.now())
    return harness


def _ended(harness: Harness, run_id: str) -> tuple[RunStatus, object]:
    record = harness.record(run_id)
    return record.status, record.result if record.error is None else record.error


def _patch_markers(harness: Harness, run_id: str) -> list[str]:
    return [op["name"] for op in harness.document(run_id)["journal"] if op["kind"] == "patch"]


@pytest.mark.parametrize("kind", KINDS)
async def test_runs_waiting_before_a_patch_keep_the_old_path_and_new_runs_take_the_new(
        harness_for: HarnessFor, kind: str) -> None:
    first = harness_for(order_app(1, kind))
    old = first.start("order", {"order": "A"})
    await first.run_due()
    assert first.record(old).status is RunStatus.WAITING

    second = _swap(first, harness_for, order_app(2, kind))
    new = second.start("order", {"order": "B"})
    await second.run_due()
    assert second.record(new).status is RunStatus.WAITING
    await second.assert_replays()  # the deploy check agrees before anything resumes
    await _finish(second, kind, {"A": old, "B": new})

    assert _ended(second, old) == (RunStatus.SUCCEEDED, "old")
    assert _ended(second, new) == (RunStatus.SUCCEEDED, "new")
    marker = "fan[0].#patch:tax" if kind == "parallel" else "#patch:tax"
    assert (_patch_markers(second, old), _patch_markers(second, new)) == ([], [marker])


@pytest.mark.parametrize("kind", KINDS)
async def test_deprecate_patch_resumes_the_patched_runs_and_starts_new_ones_on_the_new_path(
        harness_for: HarnessFor, kind: str) -> None:
    second = harness_for(order_app(2, kind))
    patched = second.start("order", {"order": "C"})
    await second.run_due()

    third = _swap(second, harness_for, order_app(3, kind))
    new = third.start("order", {"order": "D"})
    await third.run_due()
    await third.assert_replays()
    await _finish(third, kind, {"C": patched, "D": new})

    assert _ended(third, patched) == (RunStatus.SUCCEEDED, "new")
    assert _ended(third, new) == (RunStatus.SUCCEEDED, "new")
    assert _patch_markers(third, new) == []  # deprecate_patch records nothing


async def test_a_run_recorded_before_the_patch_fails_under_the_deprecated_version(
        harness_for: HarnessFor) -> None:
    first = harness_for(order_app(1, "timer"))
    old = first.start("order", {"order": "A"})
    await first.run_due()
    third = _swap(first, harness_for, order_app(3, "timer"))
    await third.run_until_idle()
    assert third.record(old).error == {
        "type": "nondeterminism", "step": "charge",
        "message": "the flow changed at operation 2: the run recorded step 'charge', the code "
                   "now asks for step 'charge-with-tax'; its code changed while the run was "
                   "in progress"}


async def test_every_call_of_one_patch_id_gives_the_first_answer(
        harness_for: HarnessFor) -> None:
    def app_of(patched: bool) -> App:
        app = App()

        @app.flow("twice")
        async def twice(ctx: Context) -> list[bool]:
            await ctx.step("first", lambda: 1)
            answers = [ctx.patched("later") if patched else False]
            await ctx.wait("pause", "1h")
            answers.append(ctx.patched("later") if patched else False)
            await ctx.step("second", lambda: 2)
            answers.append(ctx.patched("later") if patched else False)
            return answers

        return app

    first = harness_for(app_of(False))
    old = first.start("twice")
    await first.run_due()
    second = _swap(first, harness_for, app_of(True))
    new = second.start("twice")
    await second.run_until_idle()
    # the old run went past the first call without the patch: False at every call, even
    # after its wait, where the code is new to it
    assert second.record(old).result == [False, False, False]
    assert second.record(new).result == [True, True, True]
    assert _patch_markers(second, new) == ["#patch:later"]


async def test_a_patch_found_in_a_finished_branch_holds_for_the_whole_run(
        harness_for: HarnessFor) -> None:
    app = App()

    async def quick(ctx: Context) -> bool:
        return ctx.patched("shared")

    async def slow(ctx: Context) -> bool:
        await ctx.wait("nap", "1h")
        return ctx.patched("shared")

    @app.flow("fan")
    async def fan(ctx: Context) -> list[bool]:
        answers: list[bool] = await ctx.parallel(quick, slow, name="fan")
        return answers

    harness = harness_for(app)
    run_id = harness.start("fan")
    await harness.run_until_idle()
    assert harness.record(run_id).result == [True, True]
    assert _patch_markers(harness, run_id) == ["fan[0].#patch:shared"]


@pytest.mark.parametrize(("patch_id", "error", "message"), [
    ("", ValueError, "ctx.patched: patch id '' is invalid: use 1 to 100 letters, digits, "
                     "'.', '_' or '-', beginning with a letter or digit, such as "
                     "'new-tax-rule'"),
    ("-tax", ValueError, "ctx.patched: patch id '-tax' is invalid: use 1 to 100 letters, "
                         "digits, '.', '_' or '-', beginning with a letter or digit, such as "
                         "'new-tax-rule'"),
    ("new tax", ValueError, "ctx.patched: patch id 'new tax' is invalid: use 1 to 100 "
                            "letters, digits, '.', '_' or '-', beginning with a letter or "
                            "digit, such as 'new-tax-rule'"),
    ("x" * 101, ValueError, f"ctx.patched: patch id '{'x' * 101}' is invalid: use 1 to 100 "
                            "letters, digits, '.', '_' or '-', beginning with a letter or "
                            "digit, such as 'new-tax-rule'"),
    (7, TypeError, "ctx.patched needs a patch id (a string), got int"),
])
def test_a_malformed_patch_id_is_refused(patch_id: object, error: type[Exception],
                                         message: str) -> None:
    with pytest.raises(error, match=exactly(message)):
        checked_patch_id(patch_id, "ctx.patched")


async def test_a_malformed_patch_id_fails_the_run_saying_so(harness_for: HarnessFor) -> None:
    app = App()

    @app.flow("bad")
    async def bad(ctx: Context, patch_id: str = "new tax") -> None:
        ctx.deprecate_patch(patch_id)  # computed: left to run time (a literal: refused at load)

    harness = harness_for(app)
    run_id = harness.start("bad")
    await harness.run_until_idle()
    assert harness.record(run_id).error == {
        "type": "exception", "step": None,
        "message": "ValueError: ctx.deprecate_patch: patch id 'new tax' is invalid: use 1 to "
                   "100 letters, digits, '.', '_' or '-', beginning with a letter or digit, "
                   "such as 'new-tax-rule'"}


async def test_deprecating_a_patch_a_run_was_found_without_is_nondeterminism(
        harness_for: HarnessFor) -> None:
    def app_of(version: int) -> App:
        app = App()

        @app.flow("mixed")
        async def mixed(ctx: Context) -> str:
            await ctx.step("first", lambda: 1)
            old = version == 2 and not ctx.patched("tax")
            await ctx.wait("pause", "1h")
            if version == 2:
                try:
                    ctx.deprecate_patch("tax")
                except NondeterminismError:
                    return "swallowed"
            return "old" if old else "new"

        return app

    first = harness_for(app_of(1))
    run_id = first.start("mixed")
    await first.run_due()
    second = _swap(first, harness_for, app_of(2))
    await second.run_until_idle()
    record = second.record(run_id)
    assert (record.status, record.result) == (RunStatus.FAILED, None)
    assert record.error == {
        "type": "nondeterminism", "step": "#patch:tax",
        "message": "the flow: the run was recorded before patch 'tax' (ctx.patched('tax') is "
                   "False for it), but the code now calls ctx.deprecate_patch for it; keep "
                   "ctx.patched('tax') and the old code until no such run remains (tarry "
                   "replay finds them)"}


async def test_a_patch_marker_the_code_no_longer_asks_for_is_nondeterminism(
        harness_for: HarnessFor) -> None:
    second = harness_for(order_app(2, "timer"))
    run_id = second.start("order", {"order": "C"})
    await second.run_due()
    fourth = _swap(second, harness_for, order_app(1, "timer"))  # the patch removed too soon
    await fourth.run_until_idle()
    assert fourth.record(run_id).error == {
        "type": "nondeterminism", "step": "#patch:tax",
        "message": "the flow changed at operation 2: the run recorded patch 'tax', the code "
                   "now asks for step 'charge'; its code changed while the run was in "
                   "progress"}


async def test_a_patch_asked_for_before_where_the_run_recorded_it_is_true_there_too(
        harness_for: HarnessFor) -> None:
    def app_of(moved: bool) -> App:
        app = App()

        @app.flow("moved")
        async def moved_flow(ctx: Context) -> str:
            await ctx.step("first", lambda: 1)
            early = ctx.patched("x") if moved else None
            await ctx.step("second", lambda: 2)
            late = ctx.patched("x")
            await ctx.wait("pause", "1h")
            return f"{early} {late}"

        return app

    first = harness_for(app_of(False))
    run_id = first.start("moved")
    await first.run_due()
    second = _swap(first, harness_for, app_of(True))
    await second.run_until_idle()
    assert _ended(second, run_id) == (RunStatus.SUCCEEDED, "True True")

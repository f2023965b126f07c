"""Retrying a failed Python run (SPEC 4.1): the replay returns what the journal recorded and
runs the failed operation again (a step that raised, a condition that gave up); a failed
branch of ``ctx.parallel`` runs again, not its siblings."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sdk_support import HarnessFor

from tarry import App, CheckContext, Context, WaitStrategy
from tarry.model import RunStatus


class Backend:
    """Steps that count their calls; ``charge`` fails while ``down``."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.down = True

    def reserve(self, order: str) -> str:
        self.calls.append(f"reserve {order}")
        return f"R-{order}"

    def charge(self, order: str) -> str:
        self.calls.append(f"charge {order}")
        if self.down:
            raise ConnectionError("the payment backend is down")
        return f"C-{order}"


async def test_a_python_run_replays_its_journal_and_runs_the_failed_step_again(
        harness_for: HarnessFor) -> None:
    app = App()
    backend = Backend()

    @app.flow("order")
    async def order(ctx: Context, order: str) -> dict[str, Any]:
        reservation = await ctx.step("reserve", backend.reserve, order)
        await ctx.wait("settle", "1h")
        charge = await ctx.step("charge", backend.charge, order)
        return {"reservation": reservation, "charge": charge}

    harness = harness_for(app)
    run_id = harness.start("order", {"order": "A1"})
    await harness.run_until_idle()
    record = harness.record(run_id)
    assert (record.status, record.error) == (RunStatus.FAILED, {
        "type": "step-error", "step": "charge",
        "message": "step 'charge' raised ConnectionError: the payment backend is down"})
    backend.down = False
    await harness.advance(timedelta(minutes=1))

    harness.engine.retry(run_id, by="alice", reason="backend restored", inputs={"order": "A2"})
    await harness.run_until_idle()

    document = harness.document(run_id)
    assert (document["status"], document["result"]) == (
        "succeeded", {"reservation": "R-A1", "charge": "C-A2"})
    assert backend.calls == ["reserve A1", "charge A1", "charge A2"]
    assert document["attempt"] == 2
    kinds = harness.history_kinds(run_id)
    assert kinds[kinds.index("retried"):].count("step.started") == 1  # only charge again


async def test_a_failed_parallel_branch_runs_again_and_its_siblings_do_not(
        harness_for: HarnessFor) -> None:
    app = App()
    backend = Backend()

    async def first(ctx: Context) -> str:
        return str(await ctx.step("reserve", backend.reserve, "one"))

    async def second(ctx: Context) -> str:
        await ctx.wait("pause", "1m")
        return str(await ctx.step("charge", backend.charge, "two"))

    @app.flow("both")
    async def both(ctx: Context) -> list[str]:
        return list(await ctx.parallel(first, second, name="fan"))

    harness = harness_for(app)
    run_id = harness.start("both")
    await harness.run_until_idle()
    assert harness.record(run_id).error["step"] == "fan[1].charge"
    backend.down = False

    harness.engine.retry(run_id, by="alice")
    await harness.run_until_idle()

    document = harness.document(run_id)
    assert (document["status"], document["result"]) == ("succeeded", ["R-one", "C-two"])
    assert backend.calls == ["reserve one", "charge two", "charge two"]


async def test_a_condition_that_gave_up_is_waited_for_again_with_its_whole_strategy(
        harness_for: HarnessFor) -> None:
    app = App()
    statuses = ["pending", "pending", "pending", "pending", "done"]
    checks: list[int] = []

    def check(state: object, context: CheckContext) -> str:
        checks.append(context.attempt)
        return statuses.pop(0)

    @app.flow("settle")
    async def settle(ctx: Context) -> str:
        return str(await ctx.wait_for_condition(
            "settled", check=check, initial_state=None,
            strategy=WaitStrategy.fixed("1m", max_attempts=3, is_done=lambda s: s == "done")))

    harness = harness_for(app)
    run_id = harness.start("settle")
    await harness.run_until_idle()
    assert harness.record(run_id).error["type"] == "condition-exhausted"

    harness.engine.retry(run_id, by="alice")
    await harness.run_until_idle()

    assert (harness.record(run_id).status, harness.record(run_id).result) == (
        RunStatus.SUCCEEDED, "done")
    assert checks == [1, 2, 3, 1, 2]


async def test_a_python_run_is_rerun_as_a_new_run_of_its_flow(harness_for: HarnessFor) -> None:
    app = App()
    backend = Backend()
    backend.down = False

    @app.flow("order")
    async def order(ctx: Context, order: str) -> str:
        return str(await ctx.step("charge", backend.charge, order))

    harness = harness_for(app)
    first = harness.start("order", {"order": "A1"})
    await harness.run_until_idle()

    rerun = harness.engine.rerun(first, inputs={"order": "A2"})
    await harness.run_until_idle()

    assert (harness.record(rerun.id).result, harness.record(rerun.id).rerun_of) == ("C-A2", first)
    assert backend.calls == ["charge A1", "charge A2"]
    assert harness.document(first)["reruns"] == [rerun.id]

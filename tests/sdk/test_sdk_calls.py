"""ctx.call through the real engine, on both stores: a Python flow starts a child run (of a
Python or a YAML flow), waits for it without polling, gets its result, is told of its
failure (ChildFailedError, the run failed child-failed when uncaught), times out as a value
(the child cancelled), and starts each child once across replays."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sdk_support import START, HarnessFor

from tarry import App, ChildFailedError, Context
from tarry.model import RunStatus

GREET = """
flow: greet
inputs:
  name: { type: string, required: true }
steps:
  - nap:
      wait: { for: 1h }
  - done:
      exit: greeted
"""


def family(calls: list[str]) -> App:
    app = App()

    @app.flow("double")
    async def double(ctx: Context, n: int) -> int:
        await ctx.wait("nap", "2h")
        return n * 2

    @app.flow("broken")
    async def broken(ctx: Context) -> None:
        raise ValueError("no luck")

    @app.flow("sleepy")
    async def sleepy(ctx: Context) -> None:
        await ctx.wait("long", "30d")

    @app.flow("parent")
    async def parent(ctx: Context, n: int) -> dict[str, Any]:
        calls.append("ran")
        child = await ctx.call("double", n=n, target="t1")
        return {"status": child.status, "result": child.result, "exit": child.exit,
                "run": child.run}

    @app.flow("careful")
    async def careful(ctx: Context) -> str:
        try:
            await ctx.call("broken")
        except ChildFailedError as exc:
            return f"{exc.status} {exc.error['type'] if exc.error else None}"
        return "never"

    @app.flow("careless")
    async def careless(ctx: Context) -> None:
        await ctx.call("broken")

    @app.flow("impatient")
    async def impatient(ctx: Context) -> str:
        child = await ctx.call("sleepy", timeout="1d")
        return f"{child.status} {child.run}"

    @app.flow("yaml-parent")
    async def yaml_parent(ctx: Context) -> str | None:
        child = await ctx.call("greet", name="ada")
        return child.exit

    return app


async def test_a_python_flow_calls_a_child_and_gets_its_result(
        harness_for: HarnessFor) -> None:
    calls: list[str] = []
    harness = harness_for(family(calls))
    run_id = harness.start("parent", {"n": 21})
    await harness.run_due()
    [child] = harness.engine.store.children(run_id)
    record = harness.record(run_id)
    assert (record.status, record.due_at) == (RunStatus.WAITING, None)
    assert record.waiting_for is not None
    assert (record.waiting_for["kind"], record.waiting_for["run"]) == ("child", child)
    kid = harness.record(child)
    assert (kid.flow, kid.inputs, kid.target, kid.parent_id) == (
        "double", {"n": 21}, "t1", run_id)
    await harness.run_until_idle()
    assert harness.record(run_id).result == {"status": "succeeded", "result": 42,
                                             "exit": "completed", "run": child}
    assert harness.clock.now() == START + timedelta(hours=2)
    assert len(calls) == 2  # once to call, once to resume: one child
    assert harness.engine.store.children(run_id) == [child]
    operations = harness.document(run_id)["journal"]
    assert [op["kind"] for op in operations] == ["call"]


async def test_a_failed_child_raises_child_failed_error(harness_for: HarnessFor) -> None:
    harness = harness_for(family([]))
    caught = harness.start("careful")
    uncaught = harness.start("careless")
    await harness.run_until_idle()
    assert harness.record(caught).result == "failed exception"
    document = harness.document(uncaught)
    [child] = harness.engine.store.children(uncaught)
    assert document["status"] == "failed"
    assert document["error"] == {
        "type": "child-failed", "step": "#1",
        "message": f"child run {child} failed: exception: ValueError: no luck"}


async def test_a_timeout_is_a_value_and_cancels_the_child(harness_for: HarnessFor) -> None:
    harness = harness_for(family([]))
    run_id = harness.start("impatient")
    await harness.run_due()
    [child] = harness.engine.store.children(run_id)
    assert harness.record(run_id).due_at == START + timedelta(days=1)
    await harness.run_until_idle()
    assert harness.record(run_id).result == f"timeout {child}"
    assert harness.record(child).status is RunStatus.CANCELLED


async def test_a_python_flow_calls_a_yaml_flow(harness_for: HarnessFor) -> None:
    harness = harness_for(family([]))
    flows = harness.directory / "flows"
    flows.mkdir(parents=True)
    (flows / "greet.yaml").write_text(GREET)
    run_id = harness.start("yaml-parent")
    await harness.run_until_idle()
    assert harness.record(run_id).result == "greeted"


async def test_a_flow_that_does_not_exist_fails_the_call(harness_for: HarnessFor) -> None:
    app = App()

    @app.flow("lost")
    async def lost(ctx: Context) -> None:
        await ctx.call("nowhere")

    harness = harness_for(app)
    run_id = harness.start("lost")
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert document["status"] == "failed"
    assert document["error"]["type"] == "child-failed"
    assert document["error"]["message"].startswith(
        "the child of '#1' not-started: child-not-started: no flow named 'nowhere'")
    assert harness.engine.store.children(run_id) == []


@pytest.mark.parametrize(("target", "message"), [(7, "target must be a string, got 7")])
async def test_bad_arguments_fail_the_run(harness_for: HarnessFor, target: Any,
                                          message: str) -> None:
    app = App()

    @app.flow("bad")
    async def bad(ctx: Context) -> None:
        await ctx.call("bad", target=target)

    harness = harness_for(app)
    run_id = harness.start("bad")
    await harness.run_until_idle()
    error = harness.document(run_id)["error"]
    assert error["message"] == f"TypeError: call '#1': {message}"


async def test_a_finished_call_is_sealed_in_the_journal_and_replays(
        harness_for: HarnessFor) -> None:
    harness = harness_for(family([]))
    run_id = harness.start("parent", {"n": 2})
    await harness.run_due()
    await harness.assert_replays([run_id])  # waiting for its child: replays what it recorded
    await harness.run_until_idle()
    [child] = harness.engine.store.children(run_id)
    journal = harness.engine.store.journals([run_id])[run_id]
    [entry] = [entry for entry in journal if entry.scope == "op"]
    assert entry.key == "#1"
    await harness.assert_replays([run_id], statuses=[RunStatus.SUCCEEDED])
    assert harness.engine.store.children(run_id) == [child]  # the replay started nothing


async def test_a_child_that_continues_as_new_has_ended_for_its_parent(
        harness_for: HarnessFor) -> None:
    app = family([])

    @app.flow("segments")
    async def segments(ctx: Context, start: int = 0) -> int:
        await ctx.wait("nap", "1h")
        if start < 2:
            ctx.continue_as_new(start=start + 1)
        return start

    @app.flow("chained")
    async def chained(ctx: Context) -> dict[str, Any]:
        child = await ctx.call("segments")
        return {"status": child.status, "exit": child.exit, "result": child.result,
                "run": child.run}

    harness = harness_for(app)
    run_id = harness.start("chained")
    await harness.run_due()
    [child] = harness.engine.store.children(run_id)
    await harness.run_until_idle()
    assert harness.record(run_id).result == {"status": "succeeded", "exit": "continued",
                                             "result": None, "run": child}
    chain = harness.chain(child)
    assert len(chain) == 3
    assert harness.record(chain[-1]).result == 2  # the chain runs on, on its own
    assert [harness.record(run).parent_id for run in chain] == [run_id, None, None]
    assert harness.engine.store.children(run_id) == [child]

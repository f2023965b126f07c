"""The App: registering flows (and every refusal), starting and signalling them through the
project's engine, finding them by name, and the package's public surface."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sdk_support import MANIFESTS, HarnessFor, exactly

import tarry
from tarry import App, Context
from tarry.config import load_settings
from tarry.errors import ConfigError, FlowNotFound
from tarry.language.model import InputSpec
from tarry.model import RunStatus
from tarry.testing import Harness


async def settle(ctx: Context, order_id: str, attempts: int = 3, *, urgent: bool = False,
                 notes: list[str] | None = None, extra: Any = None) -> str:
    """Settle one order.

    More words.
    """
    return order_id


def not_async(ctx: Context) -> None:
    """A plain function."""


async def no_context() -> None:
    """No parameter at all."""


async def star_args(ctx: Context, *rest: str) -> None:
    """Inputs must be named."""


async def odd_default(ctx: Context, when: datetime = datetime(2026, 1, 1, tzinfo=UTC)) -> None:
    """A default that is not JSON."""


def test_a_flow_is_stored_as_a_descriptor_with_its_signature_as_inputs() -> None:
    app = App()
    assert app.flow("settle-order")(settle) is settle
    definition = app.programs({})["settle-order"].definition
    assert (definition.name, definition.source, definition.path, definition.description) == (
        "settle-order", "python:settle-order", "test_sdk_app:settle", "Settle one order.")
    assert definition.digest == hashlib.sha256(b"python:settle-order").hexdigest()
    assert definition.body.steps == ()
    assert definition.inputs == {
        "order_id": InputSpec("order_id", "string", required=True),
        "attempts": InputSpec("attempts", "integer", default=3, has_default=True),
        "urgent": InputSpec("urgent", "boolean", default=False, has_default=True),
        "notes": InputSpec("notes", "any", default=None, has_default=True),
        "extra": InputSpec("extra", "any", default=None, has_default=True)}


@pytest.mark.parametrize(("name", "function", "error", "message"), [
    ("Bad Name", settle, ValueError,
     "flow name 'Bad Name' is invalid: use a name matching [a-z0-9][a-z0-9_.-]*"),
    ("plain", not_async, TypeError,
     "flow 'plain' (test_sdk_app:not_async) must be an async function: async def "
     "not_async(ctx, ...)"),
    ("bare", no_context, TypeError,
     "flow 'bare' (test_sdk_app:no_context) must take the Context as its first parameter"),
    ("star", star_args, TypeError,
     "flow 'star' (test_sdk_app:star_args): parameter 'rest' must be an ordinary named "
     "parameter (each input is passed by name; no *args, **kwargs or positional-only inputs)"),
    ("odd", odd_default, TypeError,
     "flow 'odd' (test_sdk_app:odd_default): the default of input 'when' is not JSON data "
     "(Object of type datetime is not JSON serializable)"),
])
def test_registration_refusals(name: str, function: Any, error: type[Exception],
                               message: str) -> None:
    with pytest.raises(error, match=exactly(message)):
        App().flow(name)(function)


def test_a_name_registers_once_per_app_and_apps_do_not_share_flows() -> None:
    first, second = App(), App()
    first.flow("settle-order")(settle)
    with pytest.raises(ValueError, match=exactly(
            "flow 'settle-order' is already registered on this app (by test_sdk_app:settle)")):
        first.flow("settle-order")(settle)
    second.flow("other")(settle)
    assert list(first.programs({})) == ["settle-order"]
    assert list(second.programs({})) == ["other"]


def test_programs_follow_later_registrations() -> None:
    app = App()
    programs = app.programs({})
    app.flow("late")(settle)
    assert "late" in programs
    assert len(programs) == 1


async def test_a_misspelt_name_gets_a_suggestion(harness_for: HarnessFor) -> None:
    app = App()
    app.flow("settle-order")(settle)
    harness = harness_for(app)
    with pytest.raises(FlowNotFound, match=exactly(
            f"no flow named 'settle-ordr' in {harness.directory / 'flows'} or on the app "
            "(did you mean 'settle-order'?)")):
        harness.start("settle-ordr")


async def test_a_name_both_a_yaml_and_a_python_flow_is_refused(harness_for: HarnessFor) -> None:
    app = App()
    app.flow("hello")(settle)
    harness = harness_for(app)
    flows = harness.directory / "flows"
    flows.mkdir(parents=True)
    (flows / "hello.yaml").write_text("flow: hello\nsteps:\n  - a: { set: { x: 1 } }\n",
                                      encoding="utf-8")
    with pytest.raises(ConfigError, match=exactly(
            f"flow 'hello' is defined twice: by {flows / 'hello.yaml'} and by a Python flow of "
            "the app; rename one")):
        harness.start("hello", {"order_id": "x"})


async def test_a_worker_without_the_app_fails_the_run_clearly(tmp_path: Path,
                                                               store_url: str) -> None:
    app = App()
    app.flow("settle-order")(settle)
    with_app = Harness(tmp_path / "a", app=app, store_url=store_url)
    without = Harness(tmp_path / "b", store_url=store_url)
    other = App()
    other.flow("something-else")(settle)
    wrong_app = Harness(tmp_path / "c", app=other, store_url=store_url)
    try:
        first = with_app.start("settle-order", {"order_id": "A"})
        await without.run_due()
        second = with_app.start("settle-order", {"order_id": "B"})
        await wrong_app.run_due()
        assert without.record(first).error == {
            "type": "flow-error", "step": None,
            "message": "the run's flow is the Python flow 'settle-order', but no app is "
                       "configured (set [tarry] app = \"module:attribute\")"}
        assert wrong_app.record(second).error == {
            "type": "flow-error", "step": None,
            "message": "the run's flow is the Python flow 'settle-order', but this worker's app "
                       "does not register it"}
    finally:
        for harness in (with_app, without, wrong_app):
            harness.close()


async def test_the_app_starts_sends_and_works_through_the_projects_engine(
        tmp_path: Path, store_url: str) -> None:
    (tmp_path / "events.yaml").write_text(MANIFESTS, encoding="utf-8")
    app = App(settings=load_settings(tmp_path, env={"TARRY_DATABASE": store_url}))

    @app.flow("approval")
    async def approval(ctx: Context, message: str) -> str:
        reply = await ctx.wait_for_event("reply", "slack.approval", match={"message": message},
                                         timeout="1d")
        return str(reply.event)

    try:
        run_id = app.start("approval", message="M1", target="deal#7")
        worker = app.worker(concurrency=2)
        assert await worker.run_once() == 1
        assert app.engine.store.get_run(run_id).status is RunStatus.WAITING
        assert app.send("slack.approval", {"message": "M1"}).runs == (run_id,)
        assert await worker.run_once() == 1
        record = app.engine.store.get_run(run_id)
        assert (record.status, record.result, record.target) == (
            RunStatus.SUCCEEDED, "{'message': 'M1'}", "deal#7")
    finally:
        app.close()
    app.close()


async def test_the_app_sends_an_event_read_at_a_correlation_path(tmp_path: Path,
                                                                 store_url: str) -> None:
    (tmp_path / "events.yaml").write_text(
        "events:\n  slack.approval:\n    correlate_on: { message: container.message_ts }\n",
        encoding="utf-8")
    app = App(settings=load_settings(tmp_path, env={"TARRY_DATABASE": store_url}))

    @app.flow("approval")
    async def approval(ctx: Context, message: str) -> str:
        reply = await ctx.wait_for_event("reply", "slack.approval", match={"message": message},
                                         timeout="1d")
        return str(reply.event["container"]["message_ts"])

    try:
        run_id = app.start("approval", message="1700.1")
        assert await app.worker().run_once() == 1
        missing = app.send("slack.approval", {"message": "1700.1"})
        assert missing.errors == ("missing correlation field 'container.message_ts'",)
        assert app.send("slack.approval", {"container": {"message_ts": "1700.1"}}).runs == (
            run_id,)
        assert await app.worker().run_once() == 1
        assert app.engine.store.get_run(run_id).result == "1700.1"
    finally:
        app.close()


def test_the_package_exports_exactly_the_sdk_and_the_client() -> None:
    assert tarry.__all__ == sorted(tarry.__all__)
    assert tarry.__all__ == [
        "ApiError", "App", "AsyncClient", "CheckContext", "ChildFailedError", "ChildResult",
        "Client", "Context", "Decision",
        "EventResult", "Jitter", "JsonSerializer",
        "NondeterminismError", "SerializationError", "Serializer", "StepError", "TarryError",
        "TaskResult", "WaitForConditionError", "WaitStrategy"]
    for name in tarry.__all__:
        assert getattr(tarry, name).__doc__


async def test_a_python_flow_may_be_held_before_its_first_step(harness_for: HarnessFor) -> None:
    app = App()
    started: list[str] = []

    @app.flow("gated")
    async def gated(ctx: Context) -> str:
        return await ctx.step("begin", lambda: started.append("now") or "begun")

    harness = harness_for(app)
    opens = harness.clock.now() + timedelta(hours=2)
    run_id = harness.engine.start("gated", hold_after=opens).id
    await harness.run_due()
    assert (harness.record(run_id).status, started) == (RunStatus.HELD, [])
    await harness.run_until_idle()
    record = harness.record(run_id)
    assert (record.status, record.result, started) == (RunStatus.SUCCEEDED, "begun", ["now"])
    assert harness.clock.now() == opens

"""A Python run's journal in its run document, on both stores: each recorded operation's
name, kind, status, attempt, instants, result and error; secrets masked; a value past
``[limits] shown_bytes`` shown truncated with a marker."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sdk_support import START

from tarry import App, Context, StepError
from tarry.clock import iso
from tarry.config import Limits
from tarry.testing import Harness

SECRET = "tok-0123456789abcdef"
LATER = iso(START + timedelta(seconds=2))


def _app(harness: list[Harness]) -> App:
    app = App()

    async def fetch() -> dict[str, Any]:
        await harness[0].clock.sleep(2)
        return {"ok": 1, "auth": f"Bearer {SECRET}"}

    def refuse() -> None:
        raise ValueError(f"no, {SECRET}")

    @app.flow("journaled")
    async def journaled(ctx: Context) -> str:
        await ctx.step("fetch", fetch)
        await ctx.step("big", lambda: "x" * 300)
        with contextlib.suppress(StepError):
            await ctx.step("refuse", refuse)
        ctx.now("checked")
        await ctx.wait("nap", "1h")
        return "done"

    return app


@pytest.fixture
def harness(tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[Harness]:
    monkeypatch.setenv("TARRY_API_TOKEN", SECRET)  # a secret the deployment masks
    made: list[Harness] = []
    with Harness(tmp_path, start=START, store_url=store_url, app=_app(made),
                 limits=Limits(shown_bytes=100)) as h:
        made.append(h)
        yield h


def _rows(document: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(op["name"], op["kind"], op["status"], op["attempt"], op["started_at"],
             op["ended_at"]) for op in document["journal"]]


async def test_a_waiting_python_run_lists_what_it_recorded(harness: Harness) -> None:
    run_id = harness.start("journaled")
    await harness.run_due()
    document = harness.engine.document(run_id)
    assert _rows(document) == [
        ("fetch", "step", "completed", 1, iso(START), LATER),
        ("big", "step", "completed", 1, LATER, LATER),
        ("refuse", "step", "failed", 1, LATER, LATER),
        ("checked", "now", "completed", None, None, None),
        ("nap", "wait", "waiting", None, LATER, None),
    ]
    fetch, big, refuse, checked, _ = document["journal"]
    assert fetch["result"] == {"ok": 1, "auth": "Bearer ***"}
    assert big["result"] == {"$truncated": {"bytes": 302, "shown": '"' + "x" * 99}}
    assert (refuse["result"], refuse["error"]) == (
        None, {"type": "ValueError", "message": "no, ***"})
    assert checked["result"] == iso(START)  # the advance's one now


async def test_an_ended_python_run_keeps_its_journal_in_the_document(harness: Harness) -> None:
    run_id = harness.start("journaled")
    await harness.run_until_idle()
    document = harness.engine.document(run_id)
    assert document["status"] == "succeeded"
    assert [op["status"] for op in document["journal"]] == [
        "completed", "completed", "failed", "completed", "completed"]
    assert document["journal"][-1]["ended_at"] == iso(START + timedelta(hours=1))


async def test_a_yaml_run_has_no_journal(harness: Harness) -> None:
    run_id = harness.start(harness.flow("flow: f\nsteps:\n  - a: { set: { x: 1 } }\n"))
    await harness.run_due()
    assert "journal" not in harness.engine.document(run_id)

"""docs/flows.md, "Timeouts, heartbeats and attempts": its flow loads and runs with its
heartbeating action as printed, a hung call ends at the step's timeout and is retried as the
next attempt, and the messages the page quotes are the engine's."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from markdown_blocks import Document
from tarry.actions import ActionContext
from tarry.clock import VirtualClock
from tarry.engine.timeouts import Watch
from tarry.model import RunStatus
from tarry.secrets import Redactor
from tarry.testing import Harness

REFERENCE = Document("docs/flows.md", __file__)
SECTION = "### Timeouts, heartbeats and attempts"
FLOW = REFERENCE.block("yaml", after=SECTION)
ACTION = REFERENCE.block("python", after=SECTION)
START = datetime(2026, 3, 1, 2, 0, tzinfo=UTC)
PAGES = [[{"id": 1}], [{"id": 2}], [{"id": 3}]]


def _action(uploaded: list[str], hang: threading.Event | None = None) -> Any:
    """The page's ``export``, reading :data:`PAGES` and uploading into ``uploaded``; with
    ``hang`` set, its first attempt hangs on its second page until released."""
    def read_pages(table: str) -> Iterator[list[dict[str, Any]]]:
        assert table == "orders"
        yield from PAGES

    def upload(rows: list[dict[str, Any]], *, key: str) -> None:
        uploaded.append(key)
        if hang is not None and len(uploaded) == 2:
            hang.wait(10)

    names: dict[str, Any] = {"read_pages": read_pages, "upload": upload}
    exec(ACTION, names)  # the page's own code, as printed
    return names["export"]


async def test_the_flow_runs_its_heartbeating_action_as_printed(tmp_path: Path) -> None:
    uploaded: list[str] = []
    with Harness(tmp_path, start=START, actions={"warehouse.export": _action(uploaded)}) as h:
        run_id = h.start(h.flow(FLOW, "flows/nightly-export.yaml"))
        await h.run_until_idle()
        document = h.document(run_id)
        assert document["status"] == RunStatus.SUCCEEDED
        assert document["bindings"]["export"] == {"pages": 3, "attempt": 1}
        assert len(set(uploaded)) == 3


async def test_a_hung_export_ends_at_its_timeout_and_is_retried_as_attempt_two(
        tmp_path: Path) -> None:
    uploaded: list[str] = []
    hang = threading.Event()
    with Harness(tmp_path, start=START,
                 actions={"warehouse.export": _action(uploaded, hang)}) as h:
        run_id = h.start(h.flow(FLOW, "flows/nightly-export.yaml"))
        running = asyncio.create_task(h.run_due())
        for _ in range(500):
            if len(uploaded) == 2:
                break
            await asyncio.sleep(0.01)
        h.clock.advance(timedelta(minutes=29))  # heartbeats were within the last lease:
        await asyncio.sleep(0.05)               # only the silence can end it before 30m
        assert running.done()
        await running
        history = h.engine.store.history(run_id)
        retrying = [entry for entry in history if entry.kind == "step.retrying"]
        assert retrying[0].data["error"] == {"type": "timeout", "message": (
            "the action sent no heartbeat for 30s (the worker's lease) after its last one; "
            'last heartbeat: {"page": 0}')}
        hang.set()
        await h.run_until_idle()
        assert h.document(run_id)["bindings"]["export"] == {"pages": 3, "attempt": 2}
        keys = set(uploaded)
        assert len(keys) == 3  # the retry uploaded under the same keys


def test_the_quoted_messages_are_the_engines() -> None:
    text = re.sub(r"\s+", " ", REFERENCE.text)
    clock = VirtualClock(START)
    timed_out = Watch(clock, timedelta(minutes=2), timedelta(seconds=30))
    assert f"`{timed_out.failure(1, Redactor()).message}`" in text
    silent = Watch(clock, timedelta(minutes=30), timedelta(seconds=30))
    silent.beat({"page": 3})
    assert f"`{silent.failure(1, Redactor()).message}`" in text


def test_the_action_is_handed_what_the_page_says() -> None:
    fields = set(ActionContext.__dataclass_fields__)
    for name in ("run_id", "step_path", "attempt", "idempotency_key", "now", "timeout"):
        assert name in fields
        assert f"`{name}`" in REFERENCE.text
    assert callable(ActionContext.heartbeat)

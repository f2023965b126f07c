"""Hostile texts: every text the engine stores about a run — an error's message, a log line,
a history entry's details — is cut to ``TEXT_CHARS`` characters with a marker, on both stores.
An action raising a 20 MiB message (300 MiB on PostgreSQL, past what its ``jsonb`` holds)
fails its step once with a bounded message, and never fails the checkpoint as an outage."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from markdown_blocks import Document, shown_line
from tarry.actions import ActionContext
from tarry.model import RunStatus
from tarry.secrets import MASK, Redactor
from tarry.testing import Harness
from tarry.values import MIB, TEXT_CHARS, stored_text

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
SHOWN = Document("docs/limits.md", __file__).block("text", after="## Texts a run records")
GOOD = """
flow: good
steps:
  - call:
      fine: {}
"""


@pytest.fixture
def calls() -> list[str]:
    return []


@pytest.fixture
def size(store_url: str) -> int:
    """The size of the hostile message: past what PostgreSQL's ``jsonb`` holds there."""
    return 300 * MIB if store_url.startswith("postgresql") else 20 * MIB


@pytest.fixture
def harness(tmp_path: Path, store_url: str, calls: list[str], size: int) -> Iterator[Harness]:
    def shout(_args: dict[str, Any], ctx: ActionContext) -> None:
        calls.append(ctx.run_id)
        raise ValueError("x" * size)

    actions = {"shout": shout, "fine": lambda _args, _ctx: {"ok": True}}
    with Harness(tmp_path, start=START, actions=actions, store_url=store_url) as h:
        yield h


def _stored_history(harness: Harness, run_id: str) -> int:
    """The characters of the run's history as stored (its details' JSON)."""
    return sum(len(json.dumps(entry.data)) for entry in harness.engine.store.history(run_id))


async def test_a_huge_error_message_fails_its_step_once_with_a_bounded_one(
        harness: Harness, calls: list[str], size: int) -> None:
    good = [harness.start(harness.flow(GOOD, "good.yaml")) for _ in range(20)]
    bad = harness.start(harness.flow("""
flow: shouting
steps:
  - call:
      shout: {}
      retry: { max: 1, every: 1s }
"""))
    await harness.run_until_idle()
    record = harness.record(bad)
    marker = f" … [truncated from {size + len('ValueError: '):,} characters]"
    assert record.status is RunStatus.FAILED
    assert record.error is not None
    assert record.error["type"] == "action-error"
    message = record.error["message"]
    assert (len(message), message[:13], message[-len(marker):]) == (
        TEXT_CHARS, "ValueError: x", marker)
    if size == 20 * MIB:
        assert shown_line(SHOWN.strip()).fullmatch(message)  # as docs/limits.md shows it
    assert len(calls) == 2  # the first attempt and its one retry, each failed once
    assert _stored_history(harness, bad) < 4 * TEXT_CHARS
    assert {harness.record(run).status for run in good} == {RunStatus.SUCCEEDED}


async def test_a_huge_log_line_and_fail_message_are_stored_cut(harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: talkative
steps:
  - say:
      log: { message: "{{ 'a' * 1000000 }}" }
  - stop:
      fail: "{{ 'b' * 1000000 }}"
"""))
    await harness.run_until_idle()
    logged = [e.data["message"] for e in harness.engine.store.history(run_id) if e.kind == "log"]
    assert logged == ["a" * (TEXT_CHARS - 40) + " … [truncated from 1,000,000 characters]"]
    error = harness.record(run_id).error
    assert error == {"type": "failed", "step": "stop",
                     "message": "b" * (TEXT_CHARS - 40)
                     + " … [truncated from 1,000,000 characters]"}


def test_a_short_text_is_kept_whole_and_made_printable() -> None:
    assert stored_text("fine") == "fine"
    assert stored_text("a\x00b") == "a\\u0000b"
    assert stored_text("x" * TEXT_CHARS) == "x" * TEXT_CHARS


def test_a_long_text_is_cut_to_the_limit_with_a_marker() -> None:
    assert stored_text("abcdefghij" * 10, 60) == (
        "abcdefghijabcdefghijabcdef … [truncated from 100 characters]")


def test_a_secret_at_the_cut_is_masked_whole() -> None:
    secret = "s3cr3t-value-" * 10
    cut = stored_text("x" * 50 + secret + "y" * 100, 80, redact=Redactor((secret,)))
    marker = " … [truncated from 280 characters]"
    assert cut == ("x" * 50 + MASK + "y" * 100)[:80 - len(marker)] + marker

"""Waits matched on correlation paths (``correlate_on: {key: path}``), on both stores: a
nested value resumes the one run waiting on it, in YAML and Python flows; a payload without
a value at a path is quarantined with the path named; buffered events and waits registered
under top-level keys keep correlating."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tarry import App, Context
from tarry.model import EventState, RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
MANIFESTS = """
events:
  github.issues:
    correlate_on: { issue: issue.number, repo: repository.full_name }
  slack.click:
    correlate_on: { message: container.message_ts }
"""
ISSUE_FLOW = """
flow: triage
inputs:
  issue: { type: integer, required: true }
steps:
  - labelled:
      wait_for: github.issues
      match: { issue: "{{ issue }}", repo: acme/web }
      timeout: 7d
"""


def labeled(number: int, repo: str = "acme/web") -> dict[str, Any]:
    """The fields of a GitHub ``issues`` ``labeled`` delivery that matter here."""
    return {"action": "labeled", "issue": {"number": number, "state": "open"},
            "label": {"name": "deploy"}, "repository": {"full_name": repo}}


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    h = Harness(tmp_path, start=START, manifests=MANIFESTS, store_url=store_url)
    yield h
    h.close()


async def test_a_nested_value_resumes_the_one_run_waiting_on_it(harness: Harness) -> None:
    flow = harness.flow(ISSUE_FLOW)
    seven, eight = harness.start(flow, {"issue": 7}), harness.start(flow, {"issue": 8})
    await harness.run_due()
    other_repo = harness.send("github.issues", labeled(7, "acme/api"))
    sent = harness.send("github.issues", labeled(7))
    assert (other_repo.state, sent.state, sent.runs) == (EventState.BUFFERED,
                                                         EventState.DELIVERED, (seven,))
    await harness.run_due()
    assert harness.document(seven)["bindings"]["labelled"]["event"]["issue"]["number"] == 7
    assert harness.record(eight).status is RunStatus.WAITING


async def test_an_early_nested_reply_is_buffered_and_taken_by_the_wait(
        harness: Harness) -> None:
    assert harness.send("github.issues", labeled(9)).state is EventState.BUFFERED
    run_id = harness.start(harness.flow(ISSUE_FLOW), {"issue": 9})
    await harness.run_due()
    assert harness.record(run_id).status is RunStatus.SUCCEEDED


async def test_a_payload_without_a_value_at_a_path_is_quarantined_naming_it(
        harness: Harness) -> None:
    sent = harness.send("github.issues", {"action": "labeled", "issue": {"number": 7},
                                          "repository": "acme/web"})
    assert (sent.state, sent.errors) == (EventState.INVALID,
                                         ("missing correlation field 'repository.full_name'",))


async def test_a_python_flow_waits_on_the_key_names(tmp_path: Path, store_url: str) -> None:
    app = App()

    @app.flow("approval")
    async def approval(ctx: Context, ts: str) -> Any:
        reply = await ctx.wait_for_event("click", "slack.click", match={"message": ts},
                                         timeout="1d")
        return reply.event["actions"][0]["value"]

    with Harness(tmp_path, start=START, manifests=MANIFESTS, store_url=store_url,
                 app=app) as harness:
        run_id = harness.start("approval", {"ts": "1700000000.100"})
        await harness.run_due()
        click = {"type": "block_actions", "container": {"message_ts": "1700000000.100"},
                 "actions": [{"value": "approve"}]}
        assert harness.send("slack.click", click).runs == (run_id,)
        await harness.run_due()
        assert harness.record(run_id).result == "approve"

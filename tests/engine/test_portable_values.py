"""Portable values (SPEC 3.5.9): what no store can keep is refused at the edge, identically on
both stores; a step whose result breaks the rules fails once with ``error.type = value``, and
never stalls or fails another run committed with it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext
from tarry.config import Limits
from tarry.engine.committer import Committer
from tarry.errors import InvalidValue, ValueTooLarge
from tarry.model import CheckpointOutcome, RunStatus, RunUpdate
from tarry.store.aio import AsyncStore
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

MANIFESTS = """
events:
  note:
    correlate_on: [ticket]
"""

PRICED = """
flow: priced
inputs:
  sku: { type: string, required: true }
steps:
  - price: { shop.price: { item: "{{ sku }}" } }
  - done: { exit: priced }
"""


@pytest.fixture
def calls() -> list[str]:
    return []


@pytest.fixture
def harness(tmp_path: Path, store_url: str, calls: list[str]) -> Iterator[Harness]:
    def price(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        calls.append(args["item"])
        return {"amount": Decimal("1.5") if args["item"] == "bad" else 1.5}

    h = Harness(tmp_path, start=START, actions={"shop.price": price}, manifests=MANIFESTS,
                store_url=store_url)
    yield h
    h.close()


async def test_a_non_json_action_result_fails_its_step_once_and_spares_its_batch(
        harness: Harness, calls: list[str]) -> None:
    flow = harness.flow(PRICED)
    runs = {item: harness.start(flow, {"sku": item}) for item in ("a", "bad", "b", "c")}
    assert await harness.run_due() == 4  # one claim, one group commit
    await harness.advance(timedelta(minutes=5))  # past any lease: nothing runs again
    bad = harness.record(runs["bad"])
    assert (bad.status, bad.error) == (RunStatus.FAILED, {
        "type": "value", "step": "price",
        "message": "the result of step 'price': at amount: a Decimal is not a JSON value (use "
                   "a string, a number, true/false, null, a list or an object)"})
    assert [harness.record(runs[item]).exit for item in ("a", "b", "c")] == ["priced"] * 3
    assert sorted(calls) == ["a", "b", "bad", "c"]


@pytest.mark.parametrize(("value", "reason"), [
    ('{ v: "a\\u0000b" }', "at v: a NUL character (\\u0000) is not allowed in text (no "
                           "store keeps it)"),
    ('{ v: "{{ \'x\' * 900000 }}", w: "{{ \'y\' * 900000 }}" }',
     "1,800,015 bytes as JSON is over the limit of 1,048,576 bytes ([limits] value_bytes)"),
])
async def test_a_binding_no_store_can_keep_fails_its_step_with_the_reason(
        harness: Harness, value: str, reason: str) -> None:
    run_id = harness.start(harness.flow(f"""
flow: setter
steps:
  - keep:
      set: {value}
"""))
    await harness.run_due()
    record = harness.record(run_id)
    assert (record.status, record.error) == (RunStatus.FAILED, {
        "type": "value", "step": "keep", "message": f"the result of step 'keep': {reason}"})


async def test_a_match_value_longer_than_key_bytes_fails_the_wait(harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: long-key
steps:
  - reply:
      wait_for: note
      match: { ticket: "{{ 'T' * 12000 }}" }
      timeout: 1h
"""))
    await harness.run_due()
    assert harness.record(run_id).error == {
        "type": "value", "step": "reply",
        "message": "the match value 'ticket': 12,002 bytes as JSON is over the limit of 512 "
                   "bytes ([limits] key_bytes)"}


@pytest.mark.parametrize(("data", "event_id", "message"), [
    ({"ticket": "T1", "body": "a\x00b"}, None,
     "the event's data: at body: a NUL character (\\u0000) is not allowed in text (no store "
     "keeps it)"),
    ({"ticket": "T1", "score": float("nan")}, None,
     "the event's data: at score: nan is not a JSON number (JSON has no NaN or infinity)"),
    ({"ticket": "T1", "body": "\ud800"}, None,
     "the event's data: at body: a lone surrogate is not valid UTF-8"),
    ({"ticket": "T1"}, "e" * 12000,
     "the event id: 12,002 bytes as JSON is over the limit of 512 bytes ([limits] key_bytes)"),
    ({"ticket": "T" * 12000}, None,
     "the correlation value 'ticket': 12,002 bytes as JSON is over the limit of 512 bytes "
     "([limits] key_bytes)"),
    ({"ticket": "T1", "body": "x" * 1_100_000}, None,
     "the event's data: 1,100,025 bytes as JSON is over the limit of 1,048,576 bytes "
     "([limits] event_bytes)"),
])
async def test_an_event_no_store_can_keep_is_refused_before_anything_is_stored(
        harness: Harness, data: dict[str, Any], event_id: str | None, message: str) -> None:
    with pytest.raises(InvalidValue) as refused:
        harness.send("note", data, id=event_id)
    assert str(refused.value) == message
    assert harness.engine.events() == []


def test_too_large_is_its_own_error_with_the_numbers(harness: Harness) -> None:
    with pytest.raises(ValueTooLarge) as refused:
        harness.send("note", {"ticket": "T1"}, id="e" * 600)
    assert refused.value.details == {
        "what": "the event id", "size": 602, "limit": 512, "setting": "key_bytes",
        "reason": "602 bytes as JSON is over the limit of 512 bytes ([limits] key_bytes)"}


async def test_inputs_and_targets_no_store_can_keep_are_refused_at_start(
        harness: Harness) -> None:
    flow = harness.flow(PRICED)
    with pytest.raises(InvalidValue, match=r"^the run's inputs: at sku: a NUL character"):
        harness.start(flow, {"sku": "a\x00"})
    with pytest.raises(InvalidValue, match=r"^the run's target: a lone surrogate"):
        harness.start(flow, {"sku": "a"}, target="\udfff")
    assert harness.engine.runs() == []


async def test_the_limits_come_from_the_project_settings(tmp_path: Path, store_url: str) -> None:
    with Harness(tmp_path, start=START, manifests=MANIFESTS, store_url=store_url) as harness:
        harness.engine.limits = Limits(event_bytes=64)
        with pytest.raises(ValueTooLarge, match=r"over the limit of 64 bytes \(\[limits\] "
                                                r"event_bytes\)$"):
            harness.send("note", {"ticket": "T1", "body": "x" * 64})


async def test_a_refused_update_in_a_group_commit_fails_alone(harness: Harness) -> None:
    flow = harness.flow(PRICED)
    ids = [harness.start(flow, {"sku": item}) for item in ("ok", "unstorable")]
    store, now = harness.engine.store, harness.clock.now()
    assert len(store.claim_due(now, "w1", now + timedelta(seconds=30), 10)) == 2
    committer = Committer(AsyncStore(store), "w1", harness.clock)
    good = RunUpdate(ids[0], RunStatus.SUCCEEDED, {}, [], exit="done")
    poison = RunUpdate(ids[1], RunStatus.SUCCEEDED, {"x": Decimal("1")}, [], exit="done")
    results = await asyncio.gather(committer.submit(good), committer.submit(poison),
                                   return_exceptions=True)
    assert results[0] is CheckpointOutcome.SAVED
    assert isinstance(results[1], Exception)
    assert harness.record(ids[0]).exit == "done"
    assert harness.record(ids[1]).status is RunStatus.RUNNING


async def test_an_expression_over_the_work_budget_fails_its_step_and_hangs_nothing(
        harness: Harness) -> None:
    big = "[[1] * 100000] * 100000"
    run_id = harness.start(harness.flow(f"""
flow: hungry
steps:
  - keep:
      set: {{ v: "{{{{ {big} }}}}" }}
"""))
    await harness.run_due()
    assert harness.record(run_id).error == {
        "type": "expression", "step": "keep",
        "message": "expression does too much work (more than 1,000,000 units): "
                   f"{{{{ {big} }}}}"}

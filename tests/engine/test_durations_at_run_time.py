"""A duration computed at run time that no instant can hold fails its step with a clear
error naming the step (never ``internal-error`` with ``step: null``), on both stores."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext
from tarry.model import RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
TOO_LONG = "is longer than 100 years (36525d), the longest tarry accepts"


def always_failing(args: dict[str, Any], ctx: ActionContext) -> None:
    """A user action that always raises."""
    raise RuntimeError("still down")


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    h = Harness(tmp_path, start=START, actions={"flaky": always_failing}, store_url=store_url,
                manifests="events:\n  e:\n    correlate_on: [k]\n")
    yield h
    h.close()


async def finish(harness: Harness, steps: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Run a flow of ``steps`` with ``inputs`` until idle; its run document's error."""
    flow = harness.flow("flow: f\ninputs: { n: {}, d: {} }\nsteps:\n" + steps)
    run_id = harness.start(flow, inputs)
    await harness.run_until_idle(timedelta(days=80_000))  # past two 100-year retry waits
    record = harness.record(run_id)
    assert record.status is RunStatus.FAILED
    assert record.error is not None
    return record.error


@pytest.mark.parametrize(("steps", "inputs", "message"), [
    ("  - nap:\n      wait: { for: '{{ d }}' }\n", {"d": "P99999999999W"},
     f"duration 'P99999999999W' {TOO_LONG}: {{{{ d }}}}"),
    ("  - nap:\n      wait: { for: '{{ 1d * n }}' }\n", {"n": 10**7},
     f"duration '1428571w3d' {TOO_LONG}: {{{{ 1d * n }}}}"),
    ("  - nap:\n      wait_for: e\n      match: { k: x }\n      timeout: '{{ d }}'\n",
     {"d": "9" * 400 + "s"},
     f"duration '9999999999999999999999999999999999999...' {TOO_LONG}: {{{{ d }}}}"),
])
async def test_a_computed_duration_beyond_100_years_fails_its_step(
        harness: Harness, steps: str, inputs: dict[str, Any], message: str) -> None:
    assert await finish(harness, steps, inputs) == {
        "type": "expression", "step": "nap", "message": message}


async def test_a_retry_backoff_growing_past_any_instant_still_retries_then_fails(
        harness: Harness) -> None:
    steps = ("  - call:\n      flaky: {}\n"
             "      retry: { max: 3, every: 1d, backoff: 1000000 }\n")
    error = await finish(harness, steps, {"n": 0, "d": 0})
    assert error == {"type": "action-error", "step": "call",
                     "message": "RuntimeError: still down"}

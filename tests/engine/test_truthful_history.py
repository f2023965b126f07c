"""The history tells the truth: an action's end is stamped after the time it took, so the run
document gives each step's duration and each wait's waited time (on both stores, on the
virtual clock); expressions of one advance still see one ``now``."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry import App, Context
from tarry.actions import ActionContext
from tarry.clock import iso
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class Slow:
    """A user action that takes ``seconds`` of the harness's virtual time, then answers or
    raises."""

    def __init__(self, seconds: float, error: str | None = None) -> None:
        self.seconds = seconds
        self.error = error
        self.harness: Harness | None = None

    async def __call__(self, args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        assert self.harness is not None
        await self.harness.clock.sleep(self.seconds)
        if self.error is not None:
            raise RuntimeError(self.error)
        return {"ok": True}


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    slow, broken = Slow(8), Slow(3, error="down")
    h = Harness(tmp_path, start=START, store_url=store_url,
                actions={"slow": slow, "broken": broken})
    slow.harness = broken.harness = h
    yield h
    h.close()


def spans(document: dict[str, Any]) -> list[tuple[str, str, int | None, int | None]]:
    return [(s["step"], s["status"], s["duration_ms"], s["waited_ms"])
            for s in document["steps"]]


async def test_an_action_that_takes_8_s_shows_an_8_s_duration(harness: Harness) -> None:
    flow = harness.flow("flow: f\nsteps:\n  - call: { slow: {} }\n"
                        "  - after: { set: { at: '{{ now() }}' } }\n")
    run_id = harness.start(flow)
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert spans(document) == [("call", "completed", 8000, None), ("after", "completed", 0, None)]
    entries = [(e["kind"], e["step"], e["at"]) for e in document["history"]]
    assert ("step.started", "call", iso(START)) in entries
    assert ("step.completed", "call", iso(START + timedelta(seconds=8))) in entries
    assert entries[-1] == ("succeeded", None, iso(START + timedelta(seconds=8)))
    assert document["bindings"]["after"] == {"at": iso(START)}  # one `now` per advance


async def test_a_failed_action_is_stamped_after_its_call(harness: Harness) -> None:
    run_id = harness.start(harness.flow("flow: f\nsteps:\n  - call: { broken: {} }\n"))
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert spans(document) == [("call", "failed", 3000, None)]
    assert document["history"][-1]["at"] == iso(START + timedelta(seconds=3))


async def test_a_wait_shows_the_time_it_waited(harness: Harness) -> None:
    flow = harness.flow("flow: f\nsteps:\n  - call: { slow: {} }\n"
                        "  - nap: { wait: { for: 2h } }\n")
    run_id = harness.start(flow)
    await harness.run_until_idle()
    document = harness.document(run_id)
    # the wait registered after the action took 8 s, so it waited 2 h less those 8 s
    assert spans(document) == [("call", "completed", 8000, None),
                               ("nap", "completed", 7_192_000, 7_192_000)]


async def test_a_waiting_step_has_no_end_yet(harness: Harness) -> None:
    run_id = harness.start(harness.flow("flow: f\nsteps:\n  - nap: { wait: { for: 2h } }\n"))
    await harness.run_due()
    assert harness.document(run_id)["steps"] == [{
        "step": "nap", "status": "waiting", "started_at": iso(START), "ended_at": None,
        "duration_ms": None, "waited_ms": None}]


async def test_a_python_step_is_stamped_after_its_call(tmp_path: Path, store_url: str) -> None:
    app = App()

    @app.flow("py")
    async def py(ctx: Context) -> None:
        await ctx.step("sleepy", sleepy)

    with Harness(tmp_path, start=START, store_url=store_url, app=app) as harness:
        async def sleepy() -> int:
            await harness.clock.sleep(5)
            return 1

        run_id = harness.start("py")
        await harness.run_until_idle()
        assert spans(harness.document(run_id)) == [("sleepy", "completed", 5000, None)]

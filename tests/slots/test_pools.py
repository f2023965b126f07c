"""Step pools: ``limit: NAME`` holds one of ``[limits.pools] NAME = N`` slots while the step's
action runs, never while it waits; shared by every step of every flow naming the pool, in
the store; a step denied a slot waits (kind slot, key the pool) and is woken when one frees."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext, StepFailure
from tarry.config import Limits
from tarry.engine.explain import explain_wait
from tarry.errors import LoadError
from tarry.graph import diagram_of
from tarry.language.loader import parse_flow
from tarry.model import RunStatus
from tarry.testing import Harness

FAN = """
flow: fan
steps:
  - calls:
      for_each: [1, 2, 3, 4, 5, 6]
      concurrency: 6
      steps:
        - call: { vendor: { n: "{{ item }}" }, limit: vendor-api }
"""

OTHER = """
flow: other
steps:
  - nap: { wait: { for: 1m }, }
  - call: { vendor: { n: 0 }, limit: vendor-api }
"""


class Vendor:
    """An action that counts how many of its calls overlap, yielding between in and out."""

    def __init__(self) -> None:
        self.inside = 0
        self.most = 0
        self.calls = 0
        self.fail_first = False

    async def __call__(self, args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        self.inside += 1
        self.calls += 1
        self.most = max(self.most, self.inside)
        try:
            for _ in range(5):
                await asyncio.sleep(0)
            if self.fail_first and self.calls == 1:
                raise StepFailure("vendor down")
            return {"n": args["n"]}
        finally:
            self.inside -= 1


def _harness(tmp_path: Path, store_url: str | None, vendor: Vendor, size: int = 2) -> Harness:
    return Harness(tmp_path, store_url=store_url, actions={"vendor": vendor},
                   limits=Limits(pools={"vendor-api": size}))


async def test_branches_share_the_pool_and_the_queued_ones_wait_for_a_slot(
        tmp_path: Path, store_url: str) -> None:
    vendor = Vendor()
    with _harness(tmp_path, store_url, vendor) as harness:
        run_id = harness.start(harness.flow(FAN))
        await harness.run_until_idle()
        document = harness.document(run_id)
        queued = [(entry["step"], entry["data"]) for entry in document["history"]
                  if entry["kind"] == "slot.queued"]
        assert queued == [(f"calls[{n}].call", {"key": "vendor-api", "ahead": n - 2})
                          for n in range(2, 6)]
        taken = [entry["step"] for entry in document["history"] if entry["kind"] == "slot.taken"]
        assert taken == [f"calls[{n}].call" for n in range(2, 6)]  # handed over in turn
        assert document["status"] == RunStatus.SUCCEEDED
        assert [item["call"]["n"] for item in document["bindings"]["calls"]] == [1, 2, 3, 4,
                                                                                  5, 6]
        assert vendor.most == 2
        assert vendor.calls == 6


async def test_a_pool_is_shared_by_every_flow_and_freed_by_a_failed_action(
        tmp_path: Path, store_url: str) -> None:
    vendor = Vendor()
    vendor.fail_first = True
    with _harness(tmp_path, store_url, vendor, size=1) as harness:
        fan = harness.start(harness.flow(FAN))
        other = harness.start(harness.flow(OTHER))
        await harness.advance(timedelta(minutes=1))
        await harness.run_until_idle()
        assert harness.record(fan).status is RunStatus.FAILED  # its first call failed
        assert harness.record(other).status is RunStatus.SUCCEEDED  # the slot came free
        assert vendor.most == 1


def test_an_undeclared_pool_is_refused_at_load_with_a_suggestion(tmp_path: Path) -> None:
    with _harness(tmp_path, None, Vendor()) as harness:
        with pytest.raises(LoadError) as caught:
            harness.flow("flow: f\nsteps:\n  - a: { vendor: {}, limit: vendor-apl }\n")
        assert [str(p) for p in caught.value.problems] == [
            "flow.yaml:3:29: unknown pool 'vendor-apl' (did you mean 'vendor-api'?)"]
        with pytest.raises(LoadError) as caught:
            harness.flow("flow: f\nsteps:\n  - a: { wait: { for: 1m }, limit: vendor-api }\n")
        assert [str(p) for p in caught.value.problems] == [
            "flow.yaml:3:29: 'limit' is only allowed on action steps"]
    with Harness(tmp_path / "none", actions={"vendor": Vendor()}) as harness, \
            pytest.raises(LoadError) as caught:
        harness.flow("flow: f\nsteps:\n  - a: { vendor: {}, limit: db }\n")
    assert [str(p) for p in caught.value.problems] == [
        "flow.yaml:3:29: unknown pool 'db' (declare it in tarry.toml: [limits.pools] db = "
        "<number of slots>)"]


def test_a_step_waiting_for_a_pool_explains_itself() -> None:
    waiting = {"kind": "slot", "step": "calls[2].call", "key": "vendor-api", "ahead": 1,
               "holders": ["r-1", "r-2"], "since": "2026-03-01T09:00:00.000Z", "until": None}
    assert explain_wait({"status": "waiting", "waiting_for": waiting}) == (
        'waiting for a slot of pool "vendor-api" (1 ahead in the queue), held by r-1, r-2 at '
        "step 'calls[2].call' since 2026-03-01T09:00:00.000Z; then runs the step's action "
        "once a slot frees up")


def test_the_graph_marks_limit_steps_and_shows_the_flows_concurrency() -> None:
    flow = parse_flow('flow: g\ninputs: { repo: { type: string } }\n'
                      'concurrency: { key: "{{ repo }}", limit: 1 }\n'
                      'steps:\n  - call: { log: { message: hi }, limit: vendor-api }\n',
                      "g.yaml")
    diagram = diagram_of(flow)
    assert diagram.start == ("at most 1 run per repo at once",)
    [node] = diagram.nodes()
    assert (node.wait, node.notes) == ("slot", ("limit: a slot of pool vendor-api while it runs",))


ONE_CALL = """
flow: one-call
steps:
  - call: { gate: {}, limit: vendor-api }
"""


async def test_a_step_waiting_for_the_pool_says_so_and_starts_when_the_holder_returns(
        tmp_path: Path, store_url: str) -> None:
    entered = asyncio.Event()
    release = asyncio.Event()

    async def gate(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        entered.set()
        await release.wait()
        return {"run": ctx.run_id}

    with Harness(tmp_path, store_url=store_url, actions={"gate": gate},
                 limits=Limits(pools={"vendor-api": 1})) as harness:
        flow = harness.flow(ONE_CALL)
        runs = [harness.start(flow), harness.start(flow)]
        working = asyncio.create_task(harness.run_due())
        await asyncio.wait_for(entered.wait(), timeout=10)
        for _ in range(500):  # the other run's checkpoint, written by the worker's committer
            waiting = [harness.document(run)["waiting_for"] for run in runs]
            if any(w and w["kind"] == "slot" for w in waiting):
                break
            await asyncio.sleep(0.01)
        [queued] = [run for run, w in zip(runs, waiting, strict=True)
                    if w and w["kind"] == "slot"]
        [holder] = [run for run in runs if run != queued]
        shown = harness.document(queued)["waiting_for"]
        assert {key: shown[key] for key in ("kind", "key", "step", "ahead", "holders",
                                            "until")} == {
            "kind": "slot", "key": "vendor-api", "step": "call", "ahead": 0,
            "holders": [holder], "until": None}
        assert harness.record(queued).due_at is None
        release.set()
        await asyncio.wait_for(working, timeout=10)
        await harness.run_until_idle()
        assert {harness.record(run).status for run in runs} == {RunStatus.SUCCEEDED}

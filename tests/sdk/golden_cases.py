"""Golden recorded runs of the Python examples: the scenarios, the recorder, regeneration.

Each case runs one flow of ``examples/python`` on the virtual clock with scripted services
and events, and keeps every checkpoint the run was saved at: the instant, the run's state
(its journal) and what the store said of it (status, due_at, waiting_for, result, error).
``test_sdk_golden.py`` replays each checkpoint against the current code and asserts the very
same outcome, executing nothing — so a change to the SDK or to an example that would
mis-replay runs already in flight fails CI.

Regenerate the files (after a deliberate, compatible change, and review the diff) with::

    .venv/bin/python tests/sdk/golden_cases.py

Run ids, event ids, instants and jitter are fixed, so regenerating unchanged code gives
byte-identical files.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

from tarry.clock import iso
from tarry.config import load_settings
from tarry.engine import interpreter, runtime
from tarry.engine.journal import whole_state
from tarry.model import RunRecord, RunUpdate
from tarry.testing import Harness

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "python"
GOLDEN = Path(__file__).resolve().parent / "golden"
START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Event:
    """An event sent ``after`` the start; a ``reply`` also carries the match values the run
    waits with at that moment (a Slack message's ts, say)."""

    after: timedelta
    type: str
    data: dict[str, Any]
    reply: bool = False


@dataclass(frozen=True)
class Case:
    """One recorded run: the flow, its inputs, the payment provider's answers, the events."""

    name: str
    flow: str
    inputs: dict[str, Any]
    statuses: tuple[str, ...] = ("completed",)
    events: tuple[Event, ...] = ()
    horizon: timedelta = timedelta(days=7)
    run_id: str = field(default="")

    @property
    def id(self) -> str:
        """The run's fixed id."""
        return self.run_id or f"golden-{self.name}"


CASES = (
    Case("settle-order", "settle-order", {"order_id": "A1"},
         statuses=("pending", "pending", "completed")),
    Case("approve-deal-approved", "approve-deal", {"deal": {"name": "ACME", "amount": 1200}},
         events=(Event(timedelta(hours=3), "slack.approval", {"approved": True}, reply=True),)),
    Case("approve-deal-timeout", "approve-deal", {"deal": {"name": "Globex", "amount": 90}}),
    Case("collect-quotes", "collect-quotes", {"vendors": ["acme", "globex", "initech"]},
         events=(Event(timedelta(hours=5), "vendor.quote",
                       {"vendor": "initech", "request": "golden-collect-quotes", "price": 90}),
                 Event(timedelta(hours=9), "vendor.quote",
                       {"vendor": "acme", "request": "golden-collect-quotes", "price": 120}))),
)


def example_app() -> ModuleType:
    """The examples' ``shop`` package, imported with its folder on the path."""
    if str(EXAMPLE) not in sys.path:
        sys.path.insert(0, str(EXAMPLE))
    return importlib.import_module("shop")


def observed(record: RunRecord | RunUpdate) -> dict[str, Any]:
    """What the store says of a run at a checkpoint (or a replay's update would write)."""
    return {"status": record.status.value, "exit": record.exit, "error": record.error,
            "result": record.result, "waiting_for": record.waiting_for,
            "due_at": iso(record.due_at) if record.due_at else None}


@contextmanager
def scripted(services: Any, statuses: tuple[str, ...]) -> Iterator[None]:
    """The payment provider answers ``statuses`` in turn (then the last one forever)."""
    remaining = list(statuses)

    def payment_status(_order_id: str) -> str:
        return remaining.pop(0) if len(remaining) > 1 else remaining[0]

    original = services.payment_status
    services.payment_status = payment_status
    try:
        yield
    finally:
        services.payment_status = original


@contextmanager
def fixed_ids_and_jitter(run_id: str) -> Iterator[None]:
    """Run ids and jitter draws that are the same on every recording."""
    original = runtime.new_run_id
    runtime.new_run_id = lambda: run_id
    interpreter._SHARED_RNG.seed(20260601)
    try:
        yield
    finally:
        runtime.new_run_id = original


async def record(case: Case, directory: Path) -> dict[str, Any]:
    """Run ``case`` and return its golden document."""
    shop = example_app()
    harness = Harness(directory, start=START, project=load_settings(EXAMPLE, env={}))
    checkpoints: list[dict[str, Any]] = []

    def snapshot() -> None:
        record = harness.record(case.id)
        entries = harness.engine.store.journals([case.id]).get(case.id, [])
        state = whole_state(record.state, entries)
        if not checkpoints or checkpoints[-1]["state"] != state:
            checkpoints.append({"now": iso(harness.clock.now()), "state": state,
                                "observed": observed(record)})

    async def wakes_until(instant: datetime) -> None:
        while (due := harness.engine.store.next_due_at()) is not None and due <= instant:
            harness.clock.set(max(due, harness.clock.now()))
            await harness.run_due()
            snapshot()
        harness.clock.set(max(instant, harness.clock.now()))

    try:
        with fixed_ids_and_jitter(case.id), scripted(shop.services, case.statuses):
            harness.start(case.flow, case.inputs)
            await harness.run_due()
            snapshot()
            for number, event in enumerate(case.events):
                await wakes_until(START + event.after)
                waiting = harness.record(case.id).waiting_for or {}
                data = {**(waiting.get("match") or {}), **event.data} if event.reply \
                    else event.data
                harness.send(event.type, data, id=f"{case.name}-event-{number}")
                await harness.run_due()
                snapshot()
            await wakes_until(START + case.horizon)
    finally:
        harness.close()
    return {"flow": case.flow, "run_id": case.id, "inputs": case.inputs,
            "checkpoints": checkpoints}


def golden_path(case: Case) -> Path:
    """Where the golden document of ``case`` lives."""
    return GOLDEN / f"{case.name}.json"


def dump(document: dict[str, Any]) -> str:
    """The text of a golden file."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


async def regenerate(write: Callable[[Path, str], None]) -> None:
    """Record every case afresh and hand each file's path and text to ``write``."""
    for case in CASES:
        with tempfile.TemporaryDirectory() as scratch:
            write(golden_path(case), dump(await record(case, Path(scratch))))


def main() -> None:
    """Rewrite ``tests/sdk/golden/*.json``."""
    GOLDEN.mkdir(exist_ok=True)

    def write(path: Path, text: str) -> None:
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")

    asyncio.run(regenerate(write))


if __name__ == "__main__":
    main()

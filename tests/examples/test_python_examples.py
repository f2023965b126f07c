"""The Python-flow examples (examples/python) behave as their docstrings say, on the virtual
clock, on both stores: polling until an order settles, an approval with a timeout, and a
fan-out of per-vendor waits."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tarry.config import load_settings
from tarry.model import RunStatus
from tarry.testing import Harness

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python"
START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def harness(tmp_path: Path, store_url: str,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    """The example project's app and manifests on the test's store and a virtual clock."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    h = Harness(tmp_path, start=START, store_url=store_url,
                project=load_settings(EXAMPLE, env={}))
    yield h
    h.close()


@dataclass
class Services:
    """The example's stand-in services (``module``), with every call recorded."""

    module: ModuleType
    calls: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)

    def called(self, name: str) -> list[tuple[Any, ...]]:
        """The arguments of each call of ``name``, in order."""
        return [args for each, args in self.calls if each == name]


@pytest.fixture
def services(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> Services:
    """The stand-ins of the app the harness imported, recording their calls."""
    recorded = Services(importlib.import_module("shop.services"))
    for name in recorded.module.__all__:
        original = getattr(recorded.module, name)

        def recording(*args: Any, _name: str = name, _original: Any = original) -> Any:
            recorded.calls.append((_name, args))
            return _original(*args)

        monkeypatch.setattr(recorded.module, name, recording)
    return recorded


def statuses(*answers: str) -> Any:
    """A payment provider answering ``answers`` in turn, then the last one forever."""
    remaining = list(answers)

    def payment_status(order_id: str) -> str:
        return remaining.pop(0) if len(remaining) > 1 else remaining[0]
    return payment_status


# -- settle-order ----------------------------------------------------------------------------

async def test_an_order_is_polled_until_it_settles_then_shipped(
        harness: Harness, services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(services.module, "payment_status",
                        statuses("pending", "pending", "completed"))
    run_id = harness.start("settle-order", {"order_id": "A1"})
    await harness.run_until_idle()
    record = harness.record(run_id)
    assert record.result == {"order": "A1", "status": "completed", "tracking": "TRK-A1"}
    assert services.called("reserve_stock") == [("A1",)]
    assert services.called("ship") == [("A1", "res-A1")]
    checks = [e for e in harness.engine.store.history(run_id) if e.kind == "condition.checked"]
    assert [e.data["attempt"] for e in checks] == [1, 2, 3]
    first_pause = checks[1].at - checks[0].at
    assert timedelta(seconds=1) <= first_pause <= timedelta(seconds=2)  # 2s, full jitter


async def test_a_cancelled_order_releases_its_stock(
        harness: Harness, services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(services.module, "payment_status", statuses("pending", "cancelled"))
    run_id = harness.start("settle-order", {"order_id": "B2"})
    await harness.run_until_idle()
    assert harness.record(run_id).result == {"order": "B2", "status": "cancelled"}
    assert services.called("release_stock") == [("res-B2",)]
    assert services.called("ship") == []


async def test_an_order_that_never_settles_gives_up_after_twenty_polls(
        harness: Harness, services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(services.module, "payment_status", statuses("pending"))
    run_id = harness.start("settle-order", {"order_id": "C3"})
    await harness.run_until_idle()
    assert harness.record(run_id).result == {"order": "C3", "status": "unsettled",
                                             "last_seen": "pending"}
    assert harness.history_kinds(run_id).count("condition.checked") == 20
    assert services.called("release_stock") == [("res-C3",)]
    assert harness.clock.now() - START <= timedelta(minutes=10) * 19


# -- approve-deal ----------------------------------------------------------------------------

DEAL = {"deal": {"name": "ACME", "amount": 1200}}


async def ask(harness: Harness) -> tuple[str, str]:
    """Start an approval until it waits; its run id and the ts of its Slack post."""
    run_id = harness.start("approve-deal", DEAL)
    await harness.run_due()
    waiting = harness.record(run_id).waiting_for
    assert waiting is not None
    assert waiting["event_type"] == "slack.approval"
    return run_id, waiting["match"]["message"]


@pytest.mark.parametrize(("approved", "outcome"), [(True, "approved"), (False, "rejected")])
async def test_a_reply_in_time_decides_the_deal(harness: Harness, services: Services,
                                                approved: bool, outcome: str) -> None:
    run_id, ts = await ask(harness)
    await harness.advance(timedelta(hours=3))
    harness.send("slack.approval", {"message": ts, "approved": approved})
    await harness.run_due()
    assert harness.record(run_id).result == outcome
    assert services.called("post_to_slack") == [
        ("#sales-ops", "Approve ACME (1200)?", f"{run_id}/ask")]


async def test_no_reply_in_a_day_escalates(harness: Harness, services: Services) -> None:
    run_id, _ = await ask(harness)
    await harness.run_until_idle()
    record = harness.record(run_id)
    assert (record.status, record.result) == (RunStatus.SUCCEEDED, "no-answer")
    assert harness.clock.now() == START + timedelta(hours=24)
    assert services.called("post_to_slack")[-1][:2] == (
        "#sales-leads", "Nobody answered on ACME in a day")


# -- collect-quotes --------------------------------------------------------------------------

async def test_every_vendor_is_asked_at_once_and_each_waits_for_its_own_quote(
        harness: Harness, services: Services) -> None:
    run_id = harness.start("collect-quotes", {"vendors": ["acme", "globex", "initech"]})
    await harness.run_due()
    assert sorted(args[0] for args in services.called("request_quote")) == [
        "acme", "globex", "initech"]
    await harness.advance(timedelta(hours=5))
    harness.send("vendor.quote", {"vendor": "initech", "request": run_id, "price": 90})
    harness.send("vendor.quote", {"vendor": "acme", "request": run_id, "price": 120})
    harness.send("vendor.quote", {"vendor": "acme", "request": "another-run", "price": 1})
    await harness.run_until_idle()
    assert harness.record(run_id).result == {
        "quotes": [{"vendor": "acme", "price": 120}, {"vendor": "globex", "price": None},
                   {"vendor": "initech", "price": 90}],
        "best": {"vendor": "initech", "price": 90}}
    assert harness.clock.now() == START + timedelta(days=3)
    assert len(services.called("request_quote")) == 3

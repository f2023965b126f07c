"""examples/triggers on the virtual clock, as a user runs it: a label on a Friday evening
starts a held deploy that runs when the window opens; the weekday report is created at 09:00
Berlin time and held until its ledger is closed, a stale one superseded by the next. The
checks are the example's own scripts, run as real executables. (The signed webhook sent to
``tarry serve`` is tested in tests/server/test_triggers_webhook.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tarry.config import load_settings
from tarry.model import RunStatus
from tarry.testing import Harness
from triggers_example import LABELED, environment, example_copy


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A copy of the example (its checks read the copy's window/ folder)."""
    return example_copy(tmp_path)


@pytest.fixture
def harness(example: Path, tmp_path: Path, store_url: str) -> Iterator[Harness]:
    """The example on the virtual clock, from Friday 23 October 2026, 14:40 UTC."""
    settings = load_settings(example, environment(example, store_url))
    h = Harness(tmp_path / "state", start=datetime(2026, 10, 23, 14, 40, tzinfo=UTC),
                project=settings, store_url=store_url)
    yield h
    h.close()


async def test_a_deploy_labelled_in_the_evening_starts_when_the_window_opens(
        harness: Harness, example: Path) -> None:
    (example / "window" / "closed").touch()
    [deploy] = harness.send("github.issues", LABELED, id="delivery-1").started
    await harness.advance(timedelta(minutes=1))
    assert harness.record(deploy).status is RunStatus.HELD

    (example / "window" / "closed").unlink()
    (example / "window" / "open").touch()
    await harness.advance(timedelta(minutes=10))

    assert harness.record(deploy).exit == "deployed"


async def test_the_weekday_report_is_created_at_nine_berlin_and_a_stale_one_superseded(
        harness: Harness, example: Path) -> None:
    await harness.run_due()
    await harness.run_until(datetime(2026, 10, 26, 8, 0, 1, tzinfo=UTC))  # Monday, 09:00 CET
    [monday] = [r.id for r in harness.engine.store.list_runs(flow="report")]
    assert harness.record(monday).status is RunStatus.HELD  # the ledger is not closed

    await harness.run_until(datetime(2026, 10, 27, 8, 0, 1, tzinfo=UTC))
    tuesday = next(r.id for r in harness.engine.store.list_runs(flow="report") if r.id != monday)
    assert harness.record(monday).reason == "hold-superseded"

    (example / "window" / "ledger-closed").touch()
    await harness.advance(timedelta(minutes=10))
    assert harness.record(tuesday).exit == "reported"
    assert harness.record(tuesday).inputs == {"day": "2026-10-27T08:00:00.000Z"}

"""Stubbed checks in the harness: a check answered by a function of the virtual instant, run
as no process, recorded in history like a real one; the other checks stay real. On SQLite and
PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hold_support import T0, NoJitter, script

from tarry.holds.checks import Answer
from tarry.model import RunStatus
from tarry.testing import Harness

OPENS = T0 + timedelta(hours=2)
FLOW = "flow: deploy\nhold:\n  - check: window\n  - check: ticket\nsteps:\n  - go: { log: hi }\n"


def window(now: datetime) -> Answer:
    """Closed for two hours, then open."""
    return Answer.GO if now >= OPENS else Answer.NOT_YET


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    """``window`` stubbed (a real script of that name declared, and replaced), ``ticket`` a
    real script saying go."""
    checks = {"window": script(tmp_path / "checks", "window.sh", "exit 2"),
              "ticket": script(tmp_path / "checks", "ticket.sh", "exit 0")}
    h = Harness(tmp_path / "h", start=T0, store_url=store_url, checks=checks,
                check_stubs={"window": window}, rng=NoJitter())
    yield h
    h.close()


async def test_a_stubbed_check_answers_by_instant_and_spawns_nothing(harness: Harness) -> None:
    run = harness.start(harness.flow(FLOW), target="acme/web#7")
    await harness.run_until_idle()
    assert harness.record(run).status is RunStatus.SUCCEEDED
    checks = [entry for entry in harness.document(run)["history"]
              if entry["kind"] == "hold.check"]
    window_checks = [entry for entry in checks if entry["data"]["check"] == "window"]
    assert [(e["data"]["outcome"], e["data"]["exit"]) for e in window_checks[-2:]] == [
        ("not_yet", 3), ("go", 0)]
    assert window_checks[-2]["at"] < "2026-01-01T11:00:00.000Z" <= window_checks[-1]["at"]
    assert {e["data"]["duration_ms"] for e in window_checks} == {0}
    assert [e["data"]["outcome"] for e in checks if e["data"]["check"] == "ticket"] == ["go"]
    assert harness.engine.holds.runner.spawned == 1  # the ticket script, asked once


async def test_a_stubbed_check_needs_no_declaration(tmp_path: Path, store_url: str) -> None:
    harness = Harness(tmp_path, start=T0, store_url=store_url,
                      check_stubs={"window": lambda now: "never"})
    try:
        run = harness.start(harness.flow("flow: deploy\nhold:\n  - check: window\nsteps:\n"
                                         "  - go: { log: hi }\n"))
        await harness.run_until_idle()
        assert harness.record(run).reason == "hold-refused"
    finally:
        harness.close()

"""Business calendars in flows, executed by the real engine on a virtual clock, on both
stores: business-time waits, deadlines and reminders, ``plus``/``minus`` on a calendar, and
``window:`` on a step and on a flow."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tarry.engine.explain import explain_wait
from tarry.language.calendars import Calendar, parse_hours
from tarry.model import RunStatus
from tarry.testing import Harness

BERLIN = ZoneInfo("Europe/Berlin")
SUPPORT = Calendar("support", BERLIN, parse_hours({"mon-fri": "09:00-17:00"}),
                   frozenset({date(2026, 12, 28)}))
DEPLOY = Calendar("deploy", BERLIN, parse_hours({"tue-thu": "10:00-16:00"}))
FRIDAY_AFTERNOON = datetime(2026, 12, 25, 15, 0, tzinfo=BERLIN)  # the 28th is a holiday
MANIFESTS = """
events:
  customer.reply:
    correlate_on: [ticket]
"""


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=BERLIN)


def iso(instant: datetime) -> str:
    return instant.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    h = Harness(tmp_path, start=FRIDAY_AFTERNOON.astimezone(UTC), store_url=store_url,
                calendars={"support": SUPPORT, "deploy": DEPLOY}, manifests=MANIFESTS)
    yield h
    h.close()


async def test_a_business_time_wait_skips_nights_weekends_and_holidays(harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: sla
steps:
  - sla:
      wait: { for: { for: 6h, calendar: support } }
"""))
    await harness.run_due()
    doc = harness.document(run_id)
    # Friday 15:00-17:00 is two hours; Monday the 28th is a holiday; Tuesday 09:00-13:00
    assert doc["waiting_for"]["until"] == iso(at("2026-12-29T13:00"))
    assert doc["waiting_for"]["calendar"] == "support"
    assert doc["waiting_for"]["until_local"] == "2026-12-29 13:00 Europe/Berlin"
    assert harness.record(run_id).due_at == at("2026-12-29T13:00")
    await harness.run_until_idle()
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    assert harness.clock.now() == at("2026-12-29T13:00")


async def test_an_sla_deadline_with_business_reminders(harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: sla
inputs:
  ticket: { type: string, required: true }
steps:
  - reply:
      wait_for: customer.reply
      match: { ticket: "{{ ticket }}" }
      timeout: { for: 2d, calendar: support }
      remind:
        every: { for: 4h, calendar: support }
        steps:
          - nudge: { log: { message: "still waiting" } }
""", ), {"ticket": "T-1"})
    await harness.run_due()
    waiting = harness.document(run_id)["waiting_for"]
    # two business days from Friday 15:00, Monday a holiday: Wednesday 15:00
    assert waiting["until"] == iso(at("2026-12-30T15:00"))
    assert waiting["until_local"] == "2026-12-30 15:00 Europe/Berlin"
    # four open hours: Friday 15:00-17:00, then Tuesday 09:00-11:00
    assert waiting["next_reminder"] == iso(at("2026-12-29T11:00"))
    await harness.run_until(at("2026-12-30T15:00").astimezone(UTC))
    doc = harness.document(run_id)
    reminders = [entry["at"] for entry in doc["history"] if entry["kind"] == "reminder.sent"]
    # every four open hours; the deadline wins over the reminder due with it
    assert reminders == [iso(at("2026-12-29T11:00")), iso(at("2026-12-29T15:00")),
                         iso(at("2026-12-30T11:00"))]
    assert doc["status"] == "succeeded"
    assert doc["bindings"]["reply"]["status"] == "timeout"


async def test_plus_and_minus_count_business_days_on_a_calendar(harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: due
steps:
  - dates:
      set:
        due: "{{ now() | plus(2d, 'support') }}"
        hours: "{{ now() | plus(4h, 'support') }}"
        before: "{{ now() | minus(1d, 'support') }}"
"""))
    await harness.run_until_idle()
    binding = harness.document(run_id)["bindings"]["dates"]
    assert binding == {"due": iso(at("2026-12-30T15:00")), "hours": iso(at("2026-12-29T11:00")),
                       "before": iso(at("2026-12-24T15:00"))}


async def test_a_step_window_holds_the_step_until_the_calendar_opens(harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: deploy
steps:
  - prepare: { log: { message: "ready" } }
  - ship:
      window: deploy
      log: { message: "shipping" }
"""))
    await harness.run_due()
    doc = harness.document(run_id)
    assert doc["status"] == "waiting"
    waiting = doc["waiting_for"]
    assert (waiting["kind"], waiting["step"], waiting["calendar"]) == ("window", "ship", "deploy")
    assert waiting["until"] == iso(at("2026-12-29T10:00"))
    assert waiting["until_local"] == "2026-12-29 10:00 Europe/Berlin"
    assert explain_wait(doc) == (
        f"waiting for calendar 'deploy' to open at step 'ship' since {iso(FRIDAY_AFTERNOON)} "
        f"until {iso(at('2026-12-29T10:00'))} (2026-12-29 10:00 Europe/Berlin, deploy hours); "
        "then starts step 'ship'")
    assert harness.record(run_id).due_at == at("2026-12-29T10:00")
    assert [run.id for run in harness.engine.runs(waiting_for="window")] == [run_id]
    await harness.run_until_idle()
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    kinds = harness.history_kinds(run_id)
    registered = kinds.index("wait.registered")
    assert kinds.index("window.opened") < kinds.index("step.started", registered)
    started = [e for e in harness.document(run_id)["history"]
               if e["kind"] == "step.started" and e["step"] == "ship"]
    assert [e["at"] for e in started] == [iso(at("2026-12-29T10:00"))]


async def test_a_step_window_already_open_costs_no_wait(harness: Harness) -> None:
    harness.clock.set(at("2026-12-29T11:00").astimezone(UTC))
    run_id = harness.start(harness.flow("""
flow: deploy
steps:
  - ship:
      window: deploy
      log: { message: "shipping" }
"""))
    await harness.run_due()
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    assert "wait.registered" not in harness.history_kinds(run_id)


async def test_a_flow_window_holds_each_run_before_its_first_step(harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: deploy
window: deploy
steps:
  - ship: { log: { message: "shipping" } }
"""))
    await harness.run_due()
    doc = harness.document(run_id)
    assert doc["status"] == "waiting"
    assert (doc["waiting_for"]["kind"], doc["waiting_for"]["step"]) == ("window", None)
    assert doc["waiting_for"]["until"] == iso(at("2026-12-29T10:00"))
    assert explain_wait(doc) == (
        f"held before its first step until calendar 'deploy' opens since "
        f"{iso(FRIDAY_AFTERNOON)} until {iso(at('2026-12-29T10:00'))} (2026-12-29 10:00 "
        "Europe/Berlin, deploy hours); then starts its first step")
    assert "step.started" not in harness.history_kinds(run_id)
    await harness.run_until_idle()
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    started = [e["at"] for e in harness.document(run_id)["history"]
               if e["kind"] == "step.started"]
    assert started == [iso(at("2026-12-29T10:00"))]


async def test_a_calendar_no_longer_configured_fails_the_step_clearly(tmp_path: Path,
                                                                      store_url: str) -> None:
    source = """
flow: deploy
steps:
  - ship:
      window: deploy
      log: { message: "shipping" }
"""
    with Harness(tmp_path / "one", start=FRIDAY_AFTERNOON.astimezone(UTC), store_url=store_url,
                 calendars={"deploy": DEPLOY}) as first:
        run_id = first.start(first.flow(source))
        await first.run_due()
    with Harness(tmp_path / "one", start=FRIDAY_AFTERNOON.astimezone(UTC), store_url=store_url,
                 calendars={"depoly": DEPLOY}) as second:
        await second.run_until_idle()
        doc = second.document(run_id)
    assert doc["status"] == "failed"
    assert doc["error"] == {"type": "calendar", "step": "ship",
                            "message": "calendar 'deploy' is not configured (add a "
                                       "[calendars.deploy] table to tarry.toml) (did you mean "
                                       "'depoly'?)"}

"""``tarry doctor`` on business calendars: when each next opens, on its own clock; an error
for one that never opens; a warning for one no flow names."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner

from tarry.cli import app
from tarry.holds.doctor import Finding, Level, calendar_findings
from tarry.language.calendars import Calendar, parse_hours
from tarry.language.loader import parse_flow

BERLIN = ZoneInfo("Europe/Berlin")
SUPPORT = Calendar("support", BERLIN, parse_hours({"mon-fri": "09:00-17:00"}),
                   frozenset({date(2026, 12, 28)}))
QUIET = Calendar("quiet", BERLIN, parse_hours({"mon-sun": "22:00-24:00"}))
FLOW = parse_flow("""
flow: sla
steps:
  - due: { set: { at: "{{ now() | plus(2d, 'support') }}" } }
""", "flows/sla.yaml", calendars=("support", "quiet"))


def test_each_calendar_says_when_it_next_opens_or_until_when_it_is_open() -> None:
    friday_evening = datetime(2026, 12, 25, 18, 0, tzinfo=BERLIN)
    assert calendar_findings([FLOW], {"support": SUPPORT, "quiet": QUIET}, friday_evening) == [
        Finding(Level.OK, "calendar", "calendar 'quiet': next opens 2026-12-25 22:00 "
                                      "Europe/Berlin"),
        Finding(Level.WARNING, "calendar", "calendar 'quiet' is configured but no flow names "
                                           "it"),
        Finding(Level.OK, "calendar", "calendar 'support': next opens 2026-12-29 09:00 "
                                      "Europe/Berlin"),
    ]
    tuesday = datetime(2026, 12, 29, 10, 0, tzinfo=BERLIN)
    assert calendar_findings([FLOW], {"support": SUPPORT}, tuesday) == [
        Finding(Level.OK, "calendar", "calendar 'support': open now, until 2026-12-29 17:00 "
                                      "Europe/Berlin")]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "ship.yaml").write_text(
        "flow: ship\nwindow: mondays\nsteps:\n  - go: { log: { message: go } }\n")
    return tmp_path


def test_doctor_reports_a_calendar_that_never_opens(project: Path) -> None:
    today = datetime.now(UTC).date()
    mondays = [today + timedelta(days=offset) for offset in range(-7, 800)
               if (today + timedelta(days=offset)).weekday() == 0]
    (project / "tarry.toml").write_text(
        f'[tarry]\ndatabase = "sqlite:///{project}/t.db"\n'
        '[calendars.mondays]\ntimezone = "UTC"\nhours = { "mon" = "09:00-17:00" }\n'
        f"holidays = {json.dumps([day.isoformat() for day in mondays])}\n")

    result = CliRunner().invoke(app, ["doctor"])

    assert result.exit_code == 1
    errors = [line for line in result.stdout.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1
    assert errors[0].startswith("error: calendar 'mondays' has no open hour within two years "
                                "of ")
    assert errors[0].endswith(": every wait on it would fail with error type calendar")


def test_doctor_reports_a_flow_naming_an_unknown_calendar(project: Path) -> None:
    (project / "tarry.toml").write_text(
        f'[tarry]\ndatabase = "sqlite:///{project}/t.db"\n'
        '[calendars.monday]\ntimezone = "UTC"\nhours = { "mon" = "09:00-17:00" }\n')

    result = CliRunner().invoke(app, ["doctor"])

    assert result.exit_code == 1
    assert "error: flows/ship.yaml:2:9: unknown calendar 'mondays' (did you mean 'monday'?)" \
        in result.stdout.splitlines()

"""tarry run, show and runs on a flow held for a calendar's window: what the run waits for,
on the calendar's own clock, and the run list's filter on it."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from .conftest import Project

ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
SOME_OTHER_DAY = WEEKDAYS[(datetime.now(UTC).weekday() + 3) % 7]
"""A weekday three days from today's: the calendar is closed now, whatever the hour."""

FLOW = """\
flow: deploy
steps:
  - migrate:
      window: deploy
      log: { message: migrating }
"""


def test_a_run_held_for_a_window_says_until_when_on_the_calendars_clock(
        project: Project) -> None:
    with (project.root / "tarry.toml").open("a", encoding="utf-8") as config:
        config.write(f'\n[calendars.deploy]\ntimezone = "Asia/Tokyo"\n'
                     f'hours = {{ "{SOME_OTHER_DAY}" = "10:00-16:00" }}\n')
    project.flow("deploy", FLOW)

    result = project.tarry("run", "deploy")

    assert result.exit_code == 0, result.stderr
    explanation = result.stdout.splitlines()[1]
    found = re.fullmatch(
        rf"waiting for calendar 'deploy' to open at step 'migrate' since {ISO} until ({ISO}) "
        r"\((\d{4}-\d\d-\d\d) 10:00 Asia/Tokyo, deploy hours\); then starts step 'migrate'",
        explanation)
    assert found, explanation
    until = datetime.fromisoformat(found[1])
    assert timedelta(days=1) < until - datetime.now(UTC) < timedelta(days=4)
    assert until.astimezone(UTC).hour == 1  # 10:00 in Tokyo
    listed = project.json("runs", "--waiting-for", "window")
    assert [(doc["flow"], doc["waiting_for"]["calendar"]) for doc in listed] == [
        ("deploy", "deploy")]
    assert project.json("runs", "--waiting-for", "timer") == []
    shown = project.json("show", listed[0]["id"])
    assert shown["waiting_for"]["until_local"] == f"{found[2]} 10:00 Asia/Tokyo"


def test_runs_refuses_a_misspelt_waiting_for(project: Project) -> None:
    result = project.tarry("runs", "--waiting-for", "windwo")
    assert result.exit_code == 2
    assert ("Invalid value for '--waiting-for': 'windwo' is neither a kind of wait (child, "
            "event, hold, poll, retry, slot, task, throttle, timer, window) nor a declared event "
            "type (did you mean 'window'?)") in " ".join(result.stderr.split())


def test_validate_refuses_a_flow_naming_a_calendar_that_is_not_configured(
        project: Project) -> None:
    with (project.root / "tarry.toml").open("a", encoding="utf-8") as config:
        config.write('\n[calendars.deploy]\ntimezone = "UTC"\nhours = { "mon" = "10:00-16:00" }\n')
    project.flow("deploy", FLOW.replace("window: deploy", "window: depoly"))

    result = project.tarry("validate")

    assert result.exit_code == 1
    assert "flows/deploy.yaml:4:15: unknown calendar 'depoly' (did you mean 'deploy'?)" \
        in result.stdout

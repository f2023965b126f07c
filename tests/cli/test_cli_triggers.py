"""``tarry triggers`` and what ``tarry doctor`` says of triggers (SPEC 3.8)."""

from __future__ import annotations

import re

from .conftest import Project

EVENTS = """\
events:
  forge.label:
    correlate_on: [repo]
"""

DEPLOY = """\
flow: deploy
on:
  - event: forge.label
    if: "{{ event.label == 'deploy' }}"
    target: "{{ event.repo }}"
steps:
  - done: { exit: ok }
"""

REPORT = """\
flow: report
on:
  - schedule: "0 9 * * mon-fri"
    timezone: Europe/Berlin
steps:
  - done: { exit: ok }
"""

ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


def with_triggers(project: Project) -> Project:
    """``project`` with the event manifest and both flows."""
    (project.root / "events.yaml").write_text(EVENTS, encoding="utf-8")
    project.flow("deploy", DEPLOY)
    project.flow("report", REPORT)
    return project


def test_triggers_json_lists_each_trigger_with_its_next_fire_time(project: Project) -> None:
    documents = with_triggers(project).json("triggers")
    schedule = documents[1]
    assert re.fullmatch(ISO, schedule.pop("next_at"))
    assert re.fullmatch(r"report:[0-9a-f]{16}", schedule.pop("key"))
    assert documents == [
        {"flow": "deploy", "kind": "event", "event": "forge.label",
         "if": "{{ event.label == 'deploy' }}", "target": "{{ event.repo }}", "inputs": {},
         "line": 3},
        {"flow": "report", "kind": "schedule", "schedule": "0 9 * * mon-fri",
         "timezone": "Europe/Berlin", "catch_up": "latest", "target": None, "inputs": {},
         "line": 3}]


def test_triggers_says_in_one_line_what_starts_each_flow(project: Project) -> None:
    result = with_triggers(project).tarry("triggers")
    assert result.exit_code == 0
    rows = [re.split(r"\s{2,}", line.strip()) for line in result.stdout.splitlines()[2:]]
    assert rows[0] == ["deploy", "on each forge.label event if {{ event.label == 'deploy' }}",
                       "{{ event.repo }}"]
    assert rows[1][0] == "report"
    assert re.fullmatch(rf"0 9 \* \* mon-fri in Europe/Berlin \(catch up: latest\), next {ISO}",
                        rows[1][1])


def test_triggers_without_any_says_where_they_are_declared(project: Project) -> None:
    project.flow("plain", "flow: plain\nsteps:\n  - done: { exit: ok }\n")
    result = project.tarry("triggers")
    assert (result.exit_code, result.stdout, result.stderr) == (
        0, "", "no triggers (a flow declares them under 'on:')\n")


def test_doctor_reports_a_trigger_of_an_undeclared_type_and_an_unknown_zone(
        project: Project) -> None:
    (project.root / "events.yaml").write_text(EVENTS, encoding="utf-8")
    project.flow("deploy", DEPLOY.replace("forge.label", "forge.push"))
    project.flow("report", REPORT.replace("Europe/Berlin", "Europe/Berlim"))
    result = project.tarry("doctor")
    assert result.exit_code == 1
    errors = [line for line in result.stdout.splitlines() if line.startswith("error: ")]
    assert "error: flows/deploy.yaml:3:12: unknown event type 'forge.push'; declare it under " \
           "'events:' in an event manifest (events.yaml)" in errors
    assert "error: flows/report.yaml:4:15: unknown timezone 'Europe/Berlim' (did you mean " \
           "'Europe/Berlin'?)" in errors


BUILD = """\
flow: build
on:
  - event: forge.label
    debounce: { key: "{{ event.repo }}", period: 5m, max: 30m }
steps:
  - done: { exit: ok }
"""


def test_triggers_show_a_debounce_and_its_pending_bursts(project: Project) -> None:
    (project.root / "events.yaml").write_text(EVENTS, encoding="utf-8")
    project.flow("build", BUILD)
    for label in ("a", "b"):
        assert project.tarry("send", "forge.label", "--data",
                             f'{{"repo": "acme/web", "label": "{label}"}}').exit_code == 0
    [document] = project.json("triggers")
    debounce = document["debounce"]
    [burst] = debounce.pop("pending")
    assert debounce == {"key": "{{ event.repo }}", "period": "5m", "max": "30m"}
    assert (burst["key"], burst["events"]) == ("acme/web", 2)
    assert re.fullmatch(ISO, burst["fire_at"])
    result = project.tarry("triggers")
    assert ("on each forge.label event, debounced 5m (at most 30m) by {{ event.repo }}; "
            f"pending: 'acme/web' starts at {burst['fire_at']} (2 events)") in " ".join(
        result.output.split())

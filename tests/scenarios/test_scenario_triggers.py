"""Scenarios that exercise triggers: runs started by scripted events and by schedules on the
virtual clock, held in front by checks that are stubbed or run for real, and named in
``expect.runs``. Every test runs on SQLite and (with TARRY_TEST_POSTGRES) on PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scenario_projects import ScenarioProject

from tarry.scenarios import ScenarioResult, result_lines

MANIFESTS = """\
events:
  forge.label:
    correlate_on: [repo]
    buffer: 0
    schema: { type: object, required: [repo, number, label] }
  slack.approval:
    correlate_on: [message]
"""

DEPLOY = """\
flow: deploy
inputs:
  repo: { type: string, required: true }
on:
  - event: forge.label
    if: "{{ event.label == 'deploy' }}"
    target: "{{ event.repo }}#{{ event.number }}"
    inputs: { repo: "{{ event.repo }}" }
hold:
  - check: window
steps:
  - done: { exit: deployed }
"""

REPORT = """\
flow: report
inputs:
  day: { type: string, required: true }
on:
  - schedule: "0 9 * * mon-fri"
    timezone: Europe/Berlin
    inputs: { day: "{{ event.scheduled_at }}" }
hold:
  - check: ledger
steps:
  - done: { exit: reported }
"""

LIMITS = """\
[tarry]
database = "sqlite:///state/tarry.db"

[limits]
hold_max = "72h"
check_interval = "5m"
check_max = 400
"""

LABEL = "{ repo: acme/web, number: 7, label: deploy }"
FRIDAY_EVENING = '"2026-10-23T14:40:00Z"'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ScenarioProject:
    """A project with an event-triggered deploy held on a window check, a weekday 09:00
    Berlin report held on a ledger check (neither check declared by the project), and a
    hello flow without triggers."""
    monkeypatch.chdir(tmp_path)
    project = ScenarioProject.create(tmp_path)
    project.write("tarry.toml", LIMITS)
    project.write("events.yaml", MANIFESTS)
    project.write("flows/deploy.yaml", DEPLOY)
    project.write("flows/report.yaml", REPORT)
    project.write("flows/hello.yaml", "flow: hello\nsteps:\n  - done: { exit: greeted }\n")
    return project


def lines(result: ScenarioResult) -> list[str]:
    """The report lines of a result, the timing left out."""
    verdict, *rest = result_lines(result)
    return [verdict.rsplit(" (", 1)[0], *rest]


# --- event triggers ---------------------------------------------------------------------------

async def test_an_event_starts_a_held_run_that_clears_when_its_stub_says_go(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text(f"""\
        scenario: labelled-friday-evening
        start: {FRIDAY_EVENING}
        checks:
          window:
            - {{ answer: not_yet, until: "2026-10-26T08:00:00Z" }}
            - {{ answer: go }}
        events:
          - {{ after: 0s, type: forge.label, data: {LABEL} }}
        expect:
          runs:
            - flow: deploy
              target: acme/web#7
              exit: deployed
              inputs: {{ repo: acme/web }}
              history_contains: [created, hold.check, hold.cleared, succeeded]
        """, store_url=store_url)
    assert result.passed, lines(result)
    assert result.document is None  # the scenario started no run of its own
    [deploy] = result.started
    checks = [entry for entry in deploy.document["history"] if entry["kind"] == "hold.check"]
    assert {entry["data"]["outcome"] for entry in checks[:-1]} == {"not_yet"}
    assert (checks[-1]["data"]["outcome"], checks[-1]["data"]["exit"]) == ("go", 0)
    assert checks[-2]["at"] < "2026-10-26T08:00:00.000Z" <= checks[-1]["at"]


async def test_a_trigger_that_did_not_fire_is_reported_with_what_fired_instead(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text(f"""\
        scenario: relabelled
        checks: {{ window: go }}
        events:
          - {{ after: 0s, type: forge.label, data: {LABEL} }}
          - {{ after: 1m, type: forge.label, data: {{ repo: acme/web, number: 8, label: Deploy }} }}
          - {{ after: 2m, type: forge.label, data: {{ repo: acme/web, number: 9 }} }}
        expect:
          runs:
            - {{ flow: deploy, target: acme/web#7, exit: deployed }}
            - {{ flow: deploy, target: acme/web#8, exit: deployed }}
        """, store_url=store_url)
    assert lines(result) == [
        "FAIL relabelled",
        "  scenarios/s.yaml:10:7: runs[1] (deploy acme/web#8): not started; the triggers "
        "started these runs:",
        "      deploy acme/web#7, started by events[0] (forge.label)",
        "      events[1] (forge.label) started no run: the 'if' of every trigger on forge.label "
        "(of 'deploy') was false for it",
        "      events[2] (forge.label) started no run: it was invalid (quarantined, it starts "
        "nothing)",
    ]


async def test_a_run_started_but_not_listed_fails_and_so_does_a_wrong_expectation(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text(f"""\
        scenario: twice
        checks: {{ window: go }}
        events:
          - {{ after: 0s, type: forge.label, data: {LABEL} }}
          - {{ after: 1h, type: forge.label, data: {LABEL}, id: again }}
        expect:
          runs:
            - {{ flow: deploy, target: acme/web#7, exit: shipped }}
        """, store_url=store_url)
    assert lines(result) == [
        "FAIL twice",
        "  scenarios/s.yaml:7:3: runs: not listed: deploy acme/web#7, started by events[1] "
        "(forge.label)",
        "  scenarios/s.yaml:8:49: runs[0] (deploy acme/web#7) exit: expected \"shipped\", got "
        "\"deployed\"",
    ]


async def test_an_event_from_the_scenarios_own_run_starts_a_run_too(
        project: ScenarioProject, store_url: str) -> None:
    project.write("flows/labeller.yaml", """\
        flow: labeller
        steps:
          - label:
              emit: { type: forge.label, data: { repo: acme/api, number: 3, label: deploy } }
          - done: { exit: labelled }
        """)
    result = await project.run_text("""\
        scenario: labeller
        flow: labeller
        checks: { window: go }
        expect:
          exit: labelled
          runs:
            - { flow: deploy, target: acme/api#3, exit: deployed }
        """, store_url=store_url)
    assert result.passed, lines(result)
    assert result.started[0].cause.endswith("(forge.label), which a run sent")


# --- schedule triggers ------------------------------------------------------------------------

@pytest.mark.parametrize(("start", "occurrences"), [
    pytest.param("2026-10-22T12:00:00Z", ["2026-10-23T07:00:00Z", "2026-10-26T08:00:00Z",
                                          "2026-10-27T08:00:00Z"], id="autumn"),
    pytest.param("2026-03-26T12:00:00Z", ["2026-03-27T08:00:00Z", "2026-03-30T07:00:00Z",
                                          "2026-03-31T07:00:00Z"], id="spring"),
])
async def test_a_schedule_fires_at_its_local_time_across_a_dst_change_and_a_weekend(
        project: ScenarioProject, store_url: str, start: str, occurrences: list[str]) -> None:
    runs = "".join(f"    - {{ flow: report, scheduled_at: \"{at}\", exit: reported }}\n"
                   for at in occurrences)
    result = await project.run_text(f"""\
scenario: weekdays
start: "{start}"
horizon: 5d
schedules: [report]
checks: {{ ledger: go }}
expect:
  runs:
{runs}""", store_url=store_url)
    assert result.passed, lines(result)
    assert [run.document["created_at"] for run in result.started] == [
        at.replace("Z", ".000Z") for at in occurrences]
    assert [run.document["inputs"]["day"] for run in result.started] == [
        at.replace("Z", ".000Z") for at in occurrences]


async def test_only_the_schedules_a_scenario_lists_fire(project: ScenarioProject,
                                                        store_url: str) -> None:
    result = await project.run_text(f"""\
        scenario: quiet-week
        start: {FRIDAY_EVENING}
        checks: {{ window: go }}
        events:
          - {{ after: 3d, type: forge.label, data: {LABEL} }}
        expect:
          runs:
            - {{ flow: deploy, target: acme/web#7, exit: deployed }}
        """, store_url=store_url)
    assert result.passed, lines(result)
    assert [run.identity[0] for run in result.started] == ["deploy"]


async def test_an_occurrence_past_the_horizon_is_said_to_be_past_it(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text("""\
        scenario: too-short
        start: "2026-10-22T12:00:00Z"
        horizon: 1d
        schedules: [report]
        checks: { ledger: go }
        expect:
          runs:
            - { flow: report, scheduled_at: "2026-10-23T07:00:00Z" }
            - { flow: report, scheduled_at: "2026-10-26T08:00:00Z" }
        """, store_url=store_url)
    assert lines(result) == [
        "FAIL too-short",
        "  scenarios/s.yaml:9:7: runs[1] (report at 2026-10-26T08:00:00.000Z): not started "
        "(it lies past the horizon, 2026-10-23T12:00:00.000Z); the triggers started these runs:",
        "      report at 2026-10-23T07:00:00.000Z, started by its schedule",
    ]


async def test_a_stale_held_occurrence_is_superseded_by_the_next(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text("""\
        scenario: ledger-stays-open
        start: "2026-10-26T07:30:00Z"
        horizon: 26h
        schedules: [report]
        checks: { ledger: not_yet }
        expect:
          runs:
            - { flow: report, scheduled_at: "2026-10-26T08:00:00Z", reason: hold-superseded }
            - { flow: report, scheduled_at: "2026-10-27T08:00:00Z", status: held }
        """, store_url=store_url)
    assert result.passed, lines(result)


# --- checks -----------------------------------------------------------------------------------

async def test_a_real_check_runs_as_an_executable_with_the_target(
        project: ScenarioProject, store_url: str) -> None:
    script = project.write("checks/window.sh", """\
        #!/bin/sh
        echo "$1" >> "$(dirname "$0")/asked"
        exit 0
        """)
    script.chmod(0o755)
    result = await project.run_text(f"""\
        scenario: real-window
        checks: {{ window: {{ path: checks/window.sh }} }}
        events:
          - {{ after: 0s, type: forge.label, data: {LABEL} }}
        expect:
          runs:
            - {{ flow: deploy, target: acme/web#7, exit: deployed }}
        """, store_url=store_url)
    assert result.passed, lines(result)
    assert (project.root / "checks" / "asked").read_text() == "acme/web#7\n"


async def test_an_undeclared_check_refuses_the_triggered_run_check_unknown(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text(f"""\
        scenario: undeclared
        events:
          - {{ after: 0s, type: forge.label, data: {LABEL} }}
        expect:
          runs:
            - {{ flow: deploy, target: acme/web#7, reason: check-unknown }}
        """, store_url=store_url)
    assert result.passed, lines(result)


async def test_what_needs_the_project_is_checked_before_anything_runs(
        project: ScenarioProject, store_url: str) -> None:
    project.write("checks/not-executable.sh", "#!/bin/sh\nexit 0\n")
    result = await project.run_text("""\
        scenario: confused
        horizon: 5d
        schedules: [reprot, hello]
        checks:
          windw: go
          ledger: { path: checks/missing.sh }
          window: { path: checks/not-executable.sh }
        events: [{ after: 0s, type: forge.label, data: {} }]
        expect:
          runs:
            - { flow: deplyo }
            - { flow: hello }
            - { flow: report }
            - { flow: deploy, scheduled_at: "2026-10-26T08:00:00Z" }
            - { flow: report, scheduled_at: "2026-10-26T09:00:00Z" }
            - { flow: deploy, target: x, bindings: { don: 1 } }
        """, store_url=store_url)
    root = project.root
    assert [str(problem) for problem in result.problems] == [
        f"scenarios/s.yaml:3:13: schedules[0]: no flow named 'reprot' in {root / 'flows'} "
        "(did you mean 'report'?)",
        "scenarios/s.yaml:3:21: schedules[1]: flow 'hello' has no schedule trigger",
        f"scenarios/s.yaml:11:15: runs[0]: no flow named 'deplyo' in {root / 'flows'} "
        "(did you mean 'deploy'?)",
        "scenarios/s.yaml:12:15: runs[1]: flow 'hello' has no triggers: 'runs' lists the runs "
        "triggers start",
        "scenarios/s.yaml:13:7: runs[2]: flow 'report' is started by its schedule only: name "
        "its run by 'scheduled_at'",
        "scenarios/s.yaml:14:7: runs[3]: flow 'deploy' has no schedule trigger: no run of it "
        "has a 'scheduled_at'",
        "scenarios/s.yaml:15:7: runs[4]: 'scheduled_at' names an occurrence of flow 'report', "
        "whose schedule does not fire in this scenario (list the flow in 'schedules')",
        "scenarios/s.yaml:16:46: runs[5]: bindings: flow 'deploy' has no step 'don' (did you "
        "mean 'done'?)",
        "scenarios/s.yaml:5:3: check 'windw': no flow holds on or asks a check of this name "
        "and the project declares none (did you mean 'window'?)",
        f"scenarios/s.yaml:6:3: check 'ledger': {root / 'checks' / 'missing.sh'} does not "
        "exist",
        f"scenarios/s.yaml:7:3: check 'window': {root / 'checks' / 'not-executable.sh'} is "
        "not executable (chmod +x it)",
    ]


async def test_an_instant_that_is_no_occurrence_names_the_nearest(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text("""\
        scenario: summer-time-in-winter
        horizon: 5d
        schedules: [report]
        expect:
          runs:
            - { flow: report, scheduled_at: "2026-10-26T09:00:00+02:00" }
        """, store_url=store_url)
    assert [str(problem) for problem in result.problems] == [
        "scenarios/s.yaml:6:7: runs[0]: 2026-10-26T07:00:00.000Z is not an occurrence of the "
        "schedule of flow 'report' (0 9 * * mon-fri in Europe/Berlin); the nearest are "
        "2026-10-23T07:00:00.000Z and 2026-10-26T08:00:00.000Z",
    ]


# --- downtime ---------------------------------------------------------------------------------

SUPERSEDED = "reason: hold-superseded"
REPORTED = "exit: reported"


@pytest.mark.parametrize(("policy", "created"), [
    ("none", []),
    ("latest", [("2026-10-27T08:00:00Z", REPORTED)]),
    ("all", [("2026-10-23T07:00:00Z", SUPERSEDED), ("2026-10-26T08:00:00Z", SUPERSEDED),
             ("2026-10-27T08:00:00Z", REPORTED)]),  # created held at once: the last wins
])
async def test_after_a_downtime_catch_up_decides_which_missed_occurrences_are_created(
        project: ScenarioProject, store_url: str, policy: str,
        created: list[tuple[str, str]]) -> None:
    project.write("flows/report.yaml", REPORT.replace(
        "    timezone: Europe/Berlin\n",
        f"    timezone: Europe/Berlin\n    catch_up: {policy}\n"))
    runs = "".join(f"    - {{ flow: report, scheduled_at: \"{at}\", {outcome} }}\n"
                   for at, outcome in created)
    result = await project.run_text(f"""\
scenario: long-weekend
start: "2026-10-23T06:00:00Z"
horizon: 5d
schedules: [report]
checks: {{ ledger: go }}
downtime:
  - {{ from: "2026-10-23T06:30:00Z", until: "2026-10-27T10:00:00Z" }}
expect:
  runs:{chr(10) + runs if runs else ' []'}
""", store_url=store_url)
    assert result.passed, lines(result)
    assert {run.document["created_at"] for run in result.started} <= {
        "2026-10-27T10:00:00.000Z"}


async def test_what_falls_due_in_a_downtime_runs_when_the_workers_are_back(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text(f"""\
        scenario: label-while-down
        start: {FRIDAY_EVENING}
        checks: {{ window: go }}
        downtime:
          - {{ from: "2026-10-23T15:00:00Z", until: "2026-10-23T18:00:00Z" }}
        events:
          - {{ after: 1h, type: forge.label, data: {LABEL} }}
        expect:
          runs:
            - {{ flow: deploy, target: acme/web#7, exit: deployed }}
        """, store_url=store_url)
    assert result.passed, lines(result)
    [deploy] = result.started
    assert deploy.document["created_at"] == "2026-10-23T15:40:00.000Z"  # the API took it
    assert [entry["at"] for entry in deploy.document["history"]
            if entry["kind"] == "hold.check"] == ["2026-10-23T18:00:00.000Z"]

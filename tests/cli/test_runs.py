"""tarry run, start, runs, show and cancel, in-process on a project's SQLite store."""

from __future__ import annotations

import getpass
import re

import pytest

from .conftest import FAILING_FLOW, QUICK_FLOW, WAITING_FLOW, Project

ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
RUN_ID = r"[0-9a-f]{32}"


@pytest.fixture
def flows(project: Project) -> Project:
    project.flow("cooling", WAITING_FLOW)
    project.flow("quick", QUICK_FLOW)
    project.flow("broken", FAILING_FLOW)
    return project


# --- run --------------------------------------------------------------------------------------

def test_run_stops_at_a_wait_and_says_what_it_waits_for(flows: Project) -> None:
    result = flows.tarry("run", "cooling")
    assert result.exit_code == 0, result.stderr
    summary, explanation = result.stdout.splitlines()
    assert re.fullmatch(rf"run {RUN_ID} \(cooling\): waiting", summary)
    assert re.fullmatch(rf"waiting for timer at step 'cooling_off' since ({ISO}) until ({ISO}); "
                        r"then resumes at step 'cooling_off'", explanation)
    assert result.stderr == ("the run is saved; a worker (tarry worker) resumes it when it is "
                             "due\n")


def test_run_json_prints_the_run_document_with_history(flows: Project) -> None:
    document = flows.json("run", "cooling", "--target", "acme/web#7")
    assert document["status"] == "waiting"
    assert document["target"] == "acme/web#7"
    assert document["waiting_for"]["kind"] == "timer"
    assert document["waiting_for"]["step"] == "cooling_off"
    assert [e["kind"] for e in document["history"]][:2] == ["created", "started"]
    assert "wait.registered" in [e["kind"] for e in document["history"]]
    assert document["bindings"] == {"greet": {"text": "hi"}}


def test_follow_executes_to_the_end_printing_progress(flows: Project) -> None:
    result = flows.tarry("run", "quick", "-i", "name=Ada", "--follow")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    kinds = [line.split()[1] for line in lines[:-1]]
    assert kinds == ["created", "started", "step.started", "log", "step.completed",
                     "step.started", "wait.registered", "resumed", "step.completed",
                     "step.started", "succeeded"]
    assert 'message="Hello, Ada!"' in lines[3]
    assert re.search(r'wait.registered +short +kind="timer" until="', lines[6])
    assert re.fullmatch(rf"run {RUN_ID} \(quick\): succeeded with exit 'greeted'", lines[-1])


def test_inputs_from_json_and_pairs_merge_with_pairs_winning(flows: Project) -> None:
    document = flows.json("run", "quick", "--follow", "--inputs",
                          '{"name": "Bo", "count": 1}', "-i", "count=5")
    assert document["inputs"] == {"name": "Bo", "count": 5}
    assert document["status"] == "succeeded"


def test_a_failed_run_exits_1_and_names_its_error(flows: Project) -> None:
    result = flows.tarry("run", "broken")
    assert result.exit_code == 1
    assert re.fullmatch(rf"run {RUN_ID} \(broken\): failed: step 'boom': failed: no luck\n",
                        result.stdout)


def test_a_flow_given_by_path_runs(flows: Project) -> None:
    document = flows.json("run", "flows/quick.yaml", "--follow")
    assert document["flow"] == "quick"
    assert document["exit"] == "greeted"


def test_bad_inputs_json_is_a_usage_error(flows: Project) -> None:
    result = flows.tarry("run", "quick", "--inputs", "{nope")
    assert result.exit_code == 2
    assert "Invalid value for '--inputs': not valid JSON" in result.stderr
    assert flows.json("runs") == []


def test_inputs_the_flow_refuses_fail_with_the_reason(flows: Project) -> None:
    result = flows.tarry("run", "quick", "-i", "count=many")
    assert result.exit_code == 1
    assert result.stderr == "error: input 'count' must be an integer, got 'many'\n"


def test_an_unknown_flow_is_an_error_with_a_suggestion(flows: Project) -> None:
    result = flows.tarry("run", "coolin")
    assert result.exit_code == 1
    assert result.stderr == (f"error: no flow named 'coolin' in {flows.root / 'flows'} "
                             "(did you mean 'cooling'?)\n")


def test_a_refused_flow_prints_its_problems(flows: Project) -> None:
    path = flows.flow("typo", "flow: typo\nsteps:\n  - a:\n      wiat: { for: 2s }\n")
    result = flows.tarry("run", "flows/typo.yaml")
    assert result.exit_code == 1
    assert result.stderr == ("flows/typo.yaml:4:7: unknown action or key 'wiat' "
                             "(did you mean 'wait'?)\n")
    assert path.is_file()


@pytest.mark.parametrize("command", ["run", "start"])
@pytest.mark.parametrize("bad", [
    "flow: deep\nsteps: " + "[" * 3000 + "]" * 3000 + "\n",
    "flow: long\nsteps:\n  - a:\n      wait: { for: P99999999999W }\n",
    "flow: laughs\nsteps: [&a [x, x, x, x, x, x, x, x, x, x], "
    + ", ".join(f"&{c} [{', '.join([f'*{p}'] * 10)}]" for p, c in zip("abcd", "bcde", strict=True))
    + "]\n",
], ids=["deep", "huge duration", "aliases"])
def test_one_bad_file_in_flows_does_not_stop_another_flow(
        flows: Project, command: str, bad: str) -> None:
    flows.flow("bad", bad)
    result = flows.tarry(command, "quick")
    assert result.exit_code == 0, result.stderr
    assert len(flows.json("runs")) == 1


@pytest.mark.parametrize("command", ["run", "start"])
@pytest.mark.parametrize(("target", "message"), [
    ("", "error: a run's target must not be empty; leave the target out for a run without "
         "one\n"),
    ("--help", "error: a run's target must not begin with '-' (a check script would read it "
               "as an option): '--help'\n"),
])
def test_a_target_a_check_could_misread_is_refused(
        flows: Project, command: str, target: str, message: str) -> None:
    result = flows.tarry(command, "cooling", f"--target={target}")
    assert (result.exit_code, result.stderr) == (1, message)
    assert flows.json("runs") == []


# --- start ------------------------------------------------------------------------------------

def test_start_creates_the_run_only_and_prints_its_id(flows: Project) -> None:
    result = flows.tarry("start", "cooling", "--target", "t1")
    assert result.exit_code == 0
    run_id = result.stdout.strip()
    assert re.fullmatch(RUN_ID, run_id)
    document = flows.json("show", run_id)
    assert document["status"] == "pending"
    assert document["target"] == "t1"


def test_start_json_prints_the_pending_run_document(flows: Project) -> None:
    document = flows.json("start", "quick", "-i", "name=Cy")
    assert document["status"] == "pending"
    assert document["inputs"] == {"name": "Cy", "count": 1}
    assert [e["kind"] for e in document["history"]] == ["created"]


# --- runs -------------------------------------------------------------------------------------

def test_runs_lists_documents_without_history_newest_first(flows: Project) -> None:
    first = flows.json("run", "cooling")["id"]
    second = flows.json("start", "quick")["id"]
    listed = flows.json("runs")
    assert [d["id"] for d in listed] == [second, first]
    assert all("history" not in d for d in listed)
    assert listed[1]["waiting_for"]["kind"] == "timer"


def test_runs_filters_by_status_flow_and_limit(flows: Project) -> None:
    flows.tarry("run", "cooling")
    flows.tarry("run", "cooling")
    flows.tarry("run", "broken")
    assert [d["flow"] for d in flows.json("runs", "--status", "failed")] == ["broken"]
    assert len(flows.json("runs", "--flow", "cooling")) == 2
    assert len(flows.json("runs", "--limit", "1")) == 1
    assert flows.json("runs", "--status", "succeeded") == []


def test_runs_filters_by_the_step_a_run_waits_or_failed_at(flows: Project) -> None:
    for _ in range(3):
        flows.tarry("run", "cooling")
    flows.tarry("run", "broken")
    assert len(flows.json("runs", "--at-step", "cooling_off")) == 3
    assert [d["flow"] for d in flows.json("runs", "--at-step", "boom")] == ["broken"]
    assert flows.json("runs", "--at-step", "cooling_off", "--status", "failed") == []
    assert flows.json("runs", "--at-step", "greet") == []
    limited = flows.tarry("runs", "--at-step", "cooling_off", "--limit", "2")
    assert "2 of 3 runs shown; --limit N shows more" in limited.stderr


def test_runs_table_shows_status_ending_and_wait(flows: Project) -> None:
    waiting = flows.json("run", "cooling")
    flows.tarry("run", "broken")
    result = flows.tarry("runs")
    assert result.exit_code == 0
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[2:]}
    row = rows[waiting["id"]]
    assert row[1:5] == ["cooling", "waiting", "timer", "until"]
    assert row[5] == waiting["waiting_for"]["until"]
    assert any(r[1:4] == ["broken", "failed", "failed"] for r in rows.values())


def test_no_runs_is_said_on_stderr(flows: Project) -> None:
    assert flows.tarry("migrate").exit_code == 0
    result = flows.tarry("runs")
    assert result.exit_code == 0
    assert (result.stdout, result.stderr) == ("", "no runs\n")


def test_an_invalid_status_is_a_usage_error_listing_the_valid_ones(flows: Project) -> None:
    result = flows.tarry("runs", "--status", "sleeping")
    assert result.exit_code == 2
    assert result.stderr.endswith(
        "Error: Invalid value for '--status': 'sleeping' is not a status; use one of: held, "
        "pending, running, waiting, succeeded, failed, cancelled, refused\n")


# --- show -------------------------------------------------------------------------------------

def test_show_explains_the_wait_and_prints_bindings_and_history(flows: Project) -> None:
    document = flows.json("run", "cooling", "--target", "t9")
    registered = next(e for e in document["history"] if e["kind"] == "wait.registered")
    result = flows.tarry("show", document["id"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == f"run {document['id']} (cooling): waiting"
    assert lines[1] == "target: t9"
    assert lines[2] == (f"waiting for timer at step 'cooling_off' since {registered['at']} "
                        f"until {document['waiting_for']['until']}; then resumes at step "
                        "'cooling_off'")
    text = result.stdout
    assert 'bindings:\n{\n  "greet": {\n    "text": "hi"\n  }\n}' in text
    timeline = text[text.index("history"):]
    assert re.search(rf"{registered['at']} +wait.registered +cooling_off +kind=\"timer\"",
                     timeline)


def test_show_json_is_the_run_document(flows: Project) -> None:
    run_id = flows.json("run", "quick", "--follow")["id"]
    document = flows.json("show", run_id)
    assert {"id", "flow", "status", "exit", "error", "reason", "target", "inputs", "bindings",
            "result", "waiting_for", "created_at", "updated_at", "history"} <= set(document)
    assert (document["status"], document["exit"], document["waiting_for"]) == (
        "succeeded", "greeted", None)


def test_show_of_an_unknown_run_exits_1(flows: Project) -> None:
    assert flows.tarry("migrate").exit_code == 0
    result = flows.tarry("show", "x")
    assert result.exit_code == 1
    assert result.stderr == "error: no run with id 'x'\n"


# --- cancel -----------------------------------------------------------------------------------

def test_cancel_records_the_os_user_and_prints_the_status(flows: Project,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(getpass, "getuser", lambda: "ops-ada")
    run_id = flows.json("run", "cooling")["id"]
    result = flows.tarry("cancel", run_id)
    assert result.exit_code == 0
    assert result.stdout == f"run {run_id} (cooling): cancelled\n"
    document = flows.json("show", run_id)
    assert document["status"] == "cancelled"
    assert document["history"][-1]["data"] == {"by": "ops-ada"}


def test_cancelling_a_finished_run_fails(flows: Project) -> None:
    run_id = flows.json("run", "quick", "--follow")["id"]
    result = flows.tarry("cancel", run_id)
    assert result.exit_code == 1
    assert result.stderr == f"error: run {run_id} already succeeded\n"


def test_cancelling_an_unknown_run_fails(flows: Project) -> None:
    assert flows.tarry("migrate").exit_code == 0
    result = flows.tarry("cancel", "x")
    assert result.exit_code == 1
    assert result.stderr == "error: no run with id 'x'\n"


def test_reading_and_cancelling_runs_survive_a_broken_project(flows: Project) -> None:
    waiting = flows.json("run", "cooling")
    (flows.root / "events.yaml").write_text("events:\n  bad: [not, a, manifest]\n",
                                            encoding="utf-8")
    (flows.root / "flows" / "cooling.yaml").write_text("flow: [broken\n", encoding="utf-8")
    assert flows.tarry("run", "cooling").exit_code == 1  # starting needs the project…
    assert [d["id"] for d in flows.json("runs")] == [waiting["id"]]  # …reading does not
    assert flows.json("show", waiting["id"])["status"] == "waiting"
    cancelled = flows.tarry("cancel", waiting["id"])
    assert cancelled.exit_code == 0, cancelled.stderr
    assert flows.json("show", waiting["id"])["status"] == "cancelled"


# --- what a run waits for, and what an ended one does not -----------------------------------

ANY_FLOW = """\
flow: reply
steps:
  - reply:
      wait_for:
        any:
          - { event: email.reply, match: { ticket: "7" } }
          - { event: portal.reply, match: { case: "c-7" } }
      timeout: 2d
"""

ANY_EVENTS = """\
events:
  email.reply: { correlate_on: [ticket] }
  portal.reply: { correlate_on: [case] }
"""


def test_a_wait_for_any_names_every_alternative_in_run_show_and_json(flows: Project) -> None:
    (flows.root / "events.yaml").write_text(ANY_EVENTS, encoding="utf-8")
    flows.flow("reply", ANY_FLOW)
    document = flows.json("run", "reply")
    waiting = document["waiting_for"]
    assert waiting["alternatives"] == [
        {"event_type": "email.reply", "match": {"ticket": "7"}},
        {"event_type": "portal.reply", "match": {"case": "c-7"}}]
    registered = next(e for e in document["history"] if e["kind"] == "wait.registered")
    assert waiting["since"] == registered["at"]
    expected = (
        "waiting for event 'email.reply' matching ticket=\"7\" or event 'portal.reply' "
        f"matching case=\"c-7\" at step 'reply' since {registered['at']} until "
        f"{waiting['until']}; then resumes at step 'reply' with the first of them to arrive, "
        "or with status timeout at the deadline")
    assert waiting["explanation"] == expected
    assert flows.tarry("show", document["id"]).stdout.splitlines()[1] == expected
    assert "email.reply | portal.reply" in flows.tarry("runs").stdout


def test_a_cancelled_run_waits_for_nothing(flows: Project) -> None:
    run_id = flows.json("run", "cooling")["id"]
    assert flows.tarry("cancel", run_id).exit_code == 0
    assert flows.json("show", run_id)["waiting_for"] is None
    assert flows.json("runs", "--status", "cancelled")[0]["waiting_for"] is None
    shown = flows.tarry("show", run_id).stdout
    assert "waiting for" not in shown.split("history")[0]
    assert "timer until" not in flows.tarry("runs", "--status", "cancelled").stdout

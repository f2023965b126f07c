"""tarry send, tarry events (list, redeliver, discard), and tarry validate with manifests.

The commands that touch the store run on SQLite and on PostgreSQL (``TARRY_DATABASE`` set to
the ``store_url`` of the test).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from .conftest import QUICK_FLOW, Project

ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"

MANIFESTS = """\
events:
  slack.approval:
    correlate_on: [message]
    schema:
      type: object
      required: [message, approved]
      properties:
        approved: { type: boolean }
  ping:
    correlate_on: [to]
    buffer: 0
"""

APPROVAL = """\
flow: approval
steps:
  - approval:
      wait_for: slack.approval
      match: { message: m-1 }
      timeout: 1d
  - decided:
      if: "{{ approval.status == 'received' and approval.event.approved }}"
      exit: approved
"""

GOOD = '{"message": "m-1", "approved": true}'


@pytest.fixture
def events(project: Project, store_url: str, monkeypatch: pytest.MonkeyPatch) -> Project:
    """The project with its manifests and the approval flow, its store on each backend."""
    monkeypatch.setenv("TARRY_DATABASE", store_url)
    (project.root / "events.yaml").write_text(MANIFESTS, encoding="utf-8")
    project.flow("approval", APPROVAL)
    return project


def waiting_run(project: Project) -> str:
    """The id of a new run of ``approval``, waiting for its event."""
    document = project.json("run", "approval")
    assert document["status"] == "waiting"
    return str(document["id"])


def send(project: Project, *args: str) -> Any:
    """``tarry send … --json`` whatever its exit code; the event document."""
    return json.loads(project.tarry("send", *args, "--json").stdout)


# --- send -------------------------------------------------------------------------------------

def test_send_delivers_to_the_waiting_run(events: Project) -> None:
    run_id = waiting_run(events)
    result = events.tarry("send", "slack.approval", "--data", GOOD, "--id", "e1")
    assert (result.exit_code, result.stderr) == (
        0, "a run resumes with the event when a worker executes it (tarry worker, or tarry "
           "serve); this command runs none\n")
    assert result.stdout == f"event e1 (slack.approval): delivered to run {run_id}\n"
    assert events.tarry("worker", "--once").exit_code == 0
    assert events.json("show", run_id)["exit"] == "approved"


def test_send_names_every_run_it_reached(events: Project) -> None:
    runs = sorted([waiting_run(events), waiting_run(events)])
    result = events.tarry("send", "slack.approval", "--data", GOOD, "--id", "e1")
    assert result.stdout == (f"event e1 (slack.approval): delivered to 2 runs: "
                             f"{runs[0]}, {runs[1]}\n")


def test_send_says_until_when_an_early_event_is_buffered(events: Project) -> None:
    result = events.tarry("send", "slack.approval", "--data", GOOD, "--id", "e1")
    assert result.exit_code == 0
    assert re.fullmatch(rf"event e1 \(slack.approval\): buffered until {ISO}; a matching "
                        r"wait_for that starts by then takes it\n", result.stdout)


def test_send_of_an_event_no_run_waits_for_and_not_buffered_is_unmatched(
        events: Project) -> None:
    result = events.tarry("send", "ping", "--data", '{"to": "ada"}', "--id", "p1")
    assert result.exit_code == 0
    assert result.stdout == ("event p1 (ping): unmatched: no run waits for it (kept in the "
                             "inbox, tarry events)\n")


def test_send_of_an_invalid_payload_prints_each_error_and_exits_1(events: Project) -> None:
    result = events.tarry("send", "slack.approval", "--data", '{"approved": "yes"}',
                          "--id", "bad")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "event bad (slack.approval): invalid, not delivered:",
        "  - missing correlation field 'message'",
        "  - 'message' is a required property",
        "  - approved: 'yes' is not of type 'boolean'"]
    assert result.stderr == ("the event is kept in the quarantine; correct it with: "
                             "tarry events redeliver bad --data JSON\n")


def test_send_refuses_a_payload_over_event_bytes_and_stores_nothing(events: Project) -> None:
    big = events.root / "big.json"
    big.write_text(json.dumps({"to": "ada", "blob": "x" * 50_000_000}), encoding="utf-8")
    refusals = {f"@{big}": f"the --data file {big}: 50,000,025 bytes",
                json.dumps({"to": "ada", "blob": "y" * 2_000_000}): "the --data text: 2,000,025 "
                                                                     "bytes"}
    for data, refused in refusals.items():
        result = events.tarry("send", "ping", "--data", data)
        assert (result.exit_code, result.stderr) == (
            1, f"error: {refused} as JSON is over the limit of 1,048,576 bytes ([limits] "
               "event_bytes)\n")
    assert events.json("events") == []


def test_send_refuses_a_nul_character_as_data_not_as_an_outage(events: Project) -> None:
    result = events.tarry("send", "ping", "--data", '{"to": "a\\u0000b"}')
    assert (result.exit_code, result.stderr) == (
        1, "error: the event's data: at to: a NUL character (\\u0000) is not allowed in text "
           "(no store keeps it)\n")


def test_send_without_data_sends_an_empty_object(events: Project) -> None:
    document = send(events, "ping")
    assert (document["state"], document["data"]) == ("invalid", {})


def test_the_same_id_twice_is_a_duplicate_and_exits_0(events: Project) -> None:
    first = send(events, "slack.approval", "--data", GOOD, "--id", "e1")
    result = events.tarry("send", "slack.approval", "--data", GOOD, "--id", "e1")
    assert result.exit_code == 0
    assert result.stdout == (f"event e1 (slack.approval): duplicate: an event with this id was "
                             f"received at {first['received_at']}; nothing delivered again\n")


def test_send_json_prints_the_event_document(events: Project) -> None:
    run_id = waiting_run(events)
    result = events.tarry("send", "slack.approval", "--data", GOOD, "--id", "e1", "--json")
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert re.fullmatch(ISO, document.pop("received_at"))
    assert document == {"id": "e1", "type": "slack.approval", "state": "delivered",
                        "runs": [run_id], "started": [], "errors": [],
                        "data": {"message": "m-1", "approved": True}, "buffer_until": None}


def test_send_json_of_an_invalid_event_exits_1(events: Project) -> None:
    result = events.tarry("send", "ping", "--data", '{"from": "x"}', "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["errors"] == ["missing correlation field 'to'"]


def test_send_reads_data_from_a_file(events: Project) -> None:
    (events.root / "reply.json").write_text(GOOD, encoding="utf-8")
    assert send(events, "slack.approval", "--data", "@reply.json")["data"] == {
        "message": "m-1", "approved": True}


def test_an_unknown_type_exits_1_with_a_suggestion(events: Project) -> None:
    result = events.tarry("send", "slack.aproval", "--data", GOOD)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == ("error: unknown event type 'slack.aproval' (did you mean "
                             "'slack.approval'?); declare it in events.yaml\n")


@pytest.mark.parametrize(("data", "reason"), [
    ("{oops", "not valid JSON (Expecting property name enclosed in double quotes: line 1 "
              "column 2 (char 1))"),
    ("[1, 2]", "expected a JSON object such as '{\"name\": \"Ada\"}', got an array"),
    ("@missing.json", "cannot read missing.json: No such file or directory"),
    ('{"a": ' + "[" * 5000 + "]" * 5000 + "}",
     "not valid JSON (nested deeper than 64 levels of arrays and objects)"),
    ('{"a": ' + "9" * 4301 + "}",
     "not valid JSON (the number '9999999999999999999999999999999999999...' is longer than "
     "4000 digits)"),
    ('{"a": NaN}', "not valid JSON ('NaN' is not a JSON number (JSON has no NaN or "
                   "infinity))"),
    ('{"a": 1e400}', "not valid JSON (the number '1e400' is too large to be finite)"),
], ids=["syntax", "array", "missing file", "deep", "long number", "NaN", "infinite"])
def test_bad_data_is_a_usage_error(project: Project, data: str, reason: str) -> None:
    result = project.tarry("send", "slack.approval", "--data", data)
    assert result.exit_code == 2
    assert f"Invalid value for '--data': {reason}" in result.stderr


# --- events -----------------------------------------------------------------------------------

def test_events_lists_newest_first_in_a_table(events: Project) -> None:
    send(events, "slack.approval", "--data", GOOD, "--id", "e1")
    send(events, "ping", "--data", '{"from": "x"}', "--id", "p1")
    result = events.tarry("events")
    assert result.exit_code == 0
    header, _rule, *rows = result.stdout.splitlines()
    assert header.split() == ["id", "type", "state", "received", "detail", "data"]
    assert [row.split()[:3] for row in rows] == [["p1", "ping", "invalid"],
                                                 ["e1", "slack.approval", "buffered"]]
    assert "missing correlation field 'to'" in rows[0]
    assert re.search(rf"until {ISO} +" + re.escape('{"message":"m-1","approved":true}'),
                     rows[1])


ISSUE = {"action": "labeled", "label": {"name": "deploy"},
         "issue": {"number": 7, "title": "Ship it", "body": "x" * 2000,
                   "labels": [{"id": n, "name": f"label-{n}"} for n in range(40)]},
         "repository": {"full_name": "acme/web"}, "sender": {"login": "ada"}}
"""A payload shaped like a GitHub issues delivery: large, and nested."""


@pytest.mark.parametrize("columns", [None, "100"], ids=["pipe", "terminal"])
def test_events_shows_one_line_of_each_payload_however_large(
        events: Project, monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    send(events, "ping", "--data", json.dumps({"to": "ada", **ISSUE}), "--id", "g1")
    send(events, "ping", "--data", json.dumps({"to": "bob", **ISSUE}), "--id", "g2")
    if columns:
        monkeypatch.setenv("COLUMNS", columns)
    result = events.tarry("events")
    assert result.exit_code == 0
    _header, _rule, *rows = result.stdout.splitlines()
    assert [row.split()[0] for row in rows] == ["g2", "g1"]
    assert all(len(row) <= 300 for row in rows)
    assert all(row.rstrip().endswith(("...", "…")) for row in rows)
    stored = events.json("events")[0]["data"]  # whole, as a store keeps its keys
    assert stored == {"to": "bob", **ISSUE}
    if columns is None:  # as wide as it likes: the payload's first 80 characters
        shown = json.dumps(stored, separators=(",", ":"))[:77] + "..."
        assert rows[0].rstrip().endswith(shown)


def test_events_json_lists_event_documents(events: Project) -> None:
    sent = send(events, "ping", "--data", '{"from": "x"}', "--id", "p1")
    assert events.json("events") == [sent]


def test_events_name_the_runs_an_event_started(events: Project) -> None:
    events.flow("pinged", "flow: pinged\non:\n  - event: ping\nsteps:\n"
                          "  - hello: { set: { text: hi } }\n")
    sent = send(events, "ping", "--data", '{"to": "x"}', "--id", "p1")
    [run] = sent["started"]
    [listed] = events.json("events")
    assert (listed["id"], listed["started"]) == ("p1", [run])
    [row] = events.tarry("events").stdout.splitlines()[2:]
    assert f"started {run}" in row
    assert events.json("show", run)["flow"] == "pinged"


def test_events_state_and_limit_filter(events: Project) -> None:
    for n in range(3):
        send(events, "ping", "--data", '{"from": "x"}', "--id", f"bad{n}")
    send(events, "slack.approval", "--data", GOOD, "--id", "e1")
    assert [e["id"] for e in events.json("events", "--state", "invalid")] == [
        "bad2", "bad1", "bad0"]
    assert [e["id"] for e in events.json("events", "--state", "invalid", "--limit", "1")] == [
        "bad2"]


def test_an_empty_inbox_says_so(events: Project) -> None:
    assert events.tarry("migrate").exit_code == 0
    result = events.tarry("events")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "no events\n")
    assert events.tarry("events", "--state", "unmatched").stderr == "no unmatched events\n"


def test_an_unknown_state_is_a_usage_error_listing_the_states(project: Project) -> None:
    result = project.tarry("events", "--state", "lost")
    assert result.exit_code == 2
    assert result.stderr.endswith(
        "Error: Invalid value for '--state': 'lost' is not an event state; use one of: "
        "delivered, buffered, unmatched, invalid, duplicate, discarded\n")


def test_redeliver_with_corrected_data_reaches_the_waiting_run(events: Project) -> None:
    run_id = waiting_run(events)
    send(events, "slack.approval", "--data", '{"message": "m-1"}', "--id", "bad")
    result = events.tarry("events", "redeliver", "bad", "--data", GOOD)
    assert (result.exit_code, result.stdout) == (
        0, f"event bad (slack.approval): delivered to run {run_id}\n")
    assert events.json("events", "--state", "delivered")[0]["data"] == json.loads(GOOD)


def test_redeliver_without_data_uses_the_stored_payload(events: Project) -> None:
    send(events, "slack.approval", "--data", '{"message": "m-1"}', "--id", "bad")
    result = events.tarry("events", "redeliver", "bad", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["errors"] == ["'approved' is a required property"]


def test_discard_marks_the_event_discarded(events: Project) -> None:
    send(events, "ping", "--data", '{"from": "x"}', "--id", "p1")
    result = events.tarry("events", "discard", "p1")
    assert (result.exit_code, result.stdout) == (0, "event p1 (ping): discarded\n")
    assert [e["state"] for e in events.json("events")] == ["discarded"]


@pytest.mark.parametrize(("command", "message"), [
    (("redeliver", "nope"), "error: no event with id 'nope'"),
    (("discard", "nope"), "error: no event with id 'nope'"),
    (("redeliver", "p1"), "error: event 'p1' is discarded; only invalid, unmatched or "
                          "buffered events can be redelivered"),
    (("discard", "p1"), "error: event 'p1' is discarded; only invalid, unmatched or "
                        "buffered events can be discarded"),
])
def test_an_unknown_or_settled_event_exits_1(events: Project, command: tuple[str, ...],
                                             message: str) -> None:
    send(events, "ping", "--data", '{"from": "x"}', "--id", "p1")
    events.tarry("events", "discard", "p1")
    result = events.tarry("events", *command)
    assert (result.exit_code, result.stderr) == (1, message + "\n")


# --- validate with manifests ------------------------------------------------------------------

def test_validate_checks_the_configured_manifests_and_flows_against_them(
        project: Project) -> None:
    (project.root / "events.yaml").write_text(MANIFESTS, encoding="utf-8")
    project.flow("approval", APPROVAL)
    result = project.tarry("validate")
    assert (result.exit_code, result.stderr) == (0, "1 flow file and 1 event manifest valid\n")
    assert project.json("validate")["manifests"] == ["events.yaml"]


def test_validate_refuses_a_flow_waiting_for_an_undeclared_key(project: Project) -> None:
    (project.root / "events.yaml").write_text(MANIFESTS, encoding="utf-8")
    project.flow("approval", APPROVAL.replace("match: { message:", "match: { mesage:"))
    result = project.tarry("validate")
    assert result.exit_code == 1
    assert result.stdout == ("flows/approval.yaml:5:16: unknown key 'mesage' in 'match' "
                             "(did you mean 'message'?)\n")
    assert result.stderr == "1 problem in 1 of 1 flow file and 1 event manifest\n"


GITHUB_MANIFEST = """\
events:
  github.issues:
    correlate_on: { issue: issue.numbr, repo: repository.full_name }
    schema:
      type: object
      properties:
        issue:
          type: object
          additionalProperties: false
          properties: { number: { type: integer }, title: { type: string } }
"""
GITHUB_FLOW = """\
flow: triage
steps:
  - labelled:
      wait_for: github.issues
      match: { issue: 7, repo: acme/web }
      timeout: 1d
"""


def test_validate_refuses_a_path_the_schema_proves_absent(project: Project) -> None:
    (project.root / "events.yaml").write_text(GITHUB_MANIFEST, encoding="utf-8")
    project.flow("triage", GITHUB_FLOW)
    result = project.tarry("validate")
    assert result.exit_code == 1
    assert result.stdout == (
        "events.yaml:3:28: event type 'github.issues': no valid payload has a correlation "
        "value at 'issue.numbr': the schema allows no field 'numbr' in 'issue' (did you mean "
        "'number'?)\n")


def test_validate_accepts_paths_and_a_match_on_their_key_names(project: Project) -> None:
    (project.root / "events.yaml").write_text(
        GITHUB_MANIFEST.replace("issue.numbr", "issue.number"), encoding="utf-8")
    project.flow("triage", GITHUB_FLOW)
    result = project.tarry("validate")
    assert (result.exit_code, result.stderr) == (0, "1 flow file and 1 event manifest valid\n")
    project.flow("triage", GITHUB_FLOW.replace("issue: 7", "issue.number: 7"))
    assert project.tarry("validate").stdout == (
        "flows/triage.yaml:5:16: unknown key 'issue.number' in 'match' (did you mean "
        "'issue'? 'issue.number' is where the payload holds its value; a match gives the key "
        "names)\n")


def test_without_manifests_a_wait_for_names_an_undeclared_type(project: Project) -> None:
    project.flow("approval", APPROVAL)
    result = project.tarry("validate")
    assert result.stdout == (
        "flows/approval.yaml:4:17: unknown event type 'slack.approval'; declare it under "
        "'events:' in an event manifest (events.yaml)\n")


def test_manifest_problems_are_reported_and_flows_not_checked_against_them(
        project: Project) -> None:
    (project.root / "events.yaml").write_text(
        MANIFESTS.replace("buffer: 0", "bufer: 0"), encoding="utf-8")
    project.flow("approval", APPROVAL.replace("slack.approval", "deploy.done"))
    result = project.tarry("validate")
    assert result.exit_code == 1
    assert result.stdout == ("events.yaml:11:5: unknown key 'bufer' in event type 'ping' "
                             "(did you mean 'buffer'?)\n")
    assert result.stderr == "1 problem in 1 of 1 flow file and 1 event manifest\n"


def test_a_manifest_given_as_a_path_is_validated_and_used(project: Project) -> None:
    other = project.root / "more"
    other.mkdir()
    (other / "replies.yaml").write_text(MANIFESTS, encoding="utf-8")
    (other / "approval.yaml").write_text(APPROVAL, encoding="utf-8")
    (project.root / "events.yaml").write_text(MANIFESTS, encoding="utf-8")
    document = project.json("validate", "more", "events.yaml")
    assert document == {"ok": True, "files": ["more/approval.yaml"],
                        "manifests": ["events.yaml", "more/replies.yaml"], "apps": [],
                        "problems": []}


def test_a_configured_manifest_that_does_not_exist_is_not_required(project: Project) -> None:
    project.flow("quick", QUICK_FLOW)
    assert project.tarry("validate").stderr == "1 flow file valid\n"

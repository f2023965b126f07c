"""GitHub and Slack calling ``tarry serve`` directly, over a real socket, with requests
shaped and signed as the vendors send them (tests/server/vendor_requests.py): a labelled
issue and a button click each resume the one run waiting on their nested values, a slash
command starts a triggered run, an Events API callback is recorded, and a delivery a sender
retries is a duplicate."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_support import Served, serve, start, status_becomes, write_project
from vendor_requests import (
    GITHUB_SECRET,
    SLACK_SECRET,
    VendorRequest,
    app_mention,
    block_actions,
    github_delivery,
    issues_labeled,
    slack_form,
    slack_interaction,
    slack_json,
    slash_command,
)

EVENTS = """\
events:
  github.issues:
    correlate_on: { issue: issue.number, repo: repository.full_name }
    secret_env: GITHUB_SECRET
    signature: github
  slack.actions:
    correlate_on: { message: container.message_ts }
    secret_env: SLACK_SECRET
    signature: slack
  slack.commands:
    correlate_on: [channel_id]
    secret_env: SLACK_SECRET
    signature: slack
    buffer: 0
  slack.events:
    correlate_on: { channel: event.channel }
    secret_env: SLACK_SECRET
    signature: slack
"""
FLOWS = {
    "triage": """\
flow: triage
inputs:
  issue: { type: integer, required: true }
steps:
  - labelled:
      wait_for: github.issues
      match: { issue: "{{ issue }}", repo: acme/web }
      timeout: 7d
""",
    "label-log": """\
flow: label-log
inputs:
  label: { type: string, required: true }
on:
  - event: github.issues
    if: "{{ event.x_github_event == 'issues' and event.action == 'labeled' }}"
    target: "{{ event.repository.full_name }}#{{ event.issue.number }}"
    inputs: { label: "{{ event.label.name }}" }
steps:
  - noted: { log: { message: "labelled {{ label }}" } }
""",
    "approval": """\
flow: approval
inputs:
  ts: { type: string, required: true }
steps:
  - decision:
      wait_for: slack.actions
      match: { message: "{{ ts }}" }
      timeout: 1d
""",
    "deploy": """\
flow: deploy
inputs:
  service: { type: string, required: true }
on:
  - event: slack.commands
    if: "{{ event.command == '/deploy' }}"
    target: "{{ event.text }}"
    inputs: { service: "{{ event.text }}" }
steps:
  - deployed: { log: { message: "deploying {{ service }}" } }
""",
}


@pytest.fixture
def served(tmp_path: Path, store_url: str) -> Iterator[Served]:
    root = write_project(tmp_path, store_url, events=EVENTS, flows=FLOWS)
    secrets = {"GITHUB_SECRET": GITHUB_SECRET, "SLACK_SECRET": SLACK_SECRET}
    with serve(root, secrets) as running:
        yield running


def post(client: httpx.Client, event_type: str, request: VendorRequest) -> httpx.Response:
    """POST ``request`` as its sender does: no bearer token, its own headers."""
    return client.post(f"/v1/events/{event_type}", content=request.body,
                       headers=request.headers)


def operator(served: Served) -> httpx.Client:
    """The operator's client (loopback, no token configured)."""
    return served.client()


def test_a_labelled_issue_resumes_the_one_run_waiting_on_its_number(served: Served) -> None:
    with operator(served) as client, served.client() as github:
        seven = start(client, "triage", inputs={"issue": 7})["id"]
        eight = start(client, "triage", inputs={"issue": 8})["id"]
        assert status_becomes(client, seven, "waiting")
        assert status_becomes(client, eight, "waiting")
        answer = post(github, "github.issues", github_delivery(issues_labeled(7)))
        assert answer.status_code == 202, answer.text
        event = answer.json()
        assert (event["state"], event["runs"]) == ("delivered", [seven])
        assert event["data"]["x_github_event"] == "issues"
        assert status_becomes(client, seven, "succeeded")
        event = client.get(f"/v1/runs/{seven}").json()["bindings"]["labelled"]["event"]
        assert (event["issue"]["number"], event["label"]["name"]) == (7, "deploy")
        assert client.get(f"/v1/runs/{eight}").json()["status"] == "waiting"


def test_the_event_header_and_action_reach_a_trigger(served: Served) -> None:
    with operator(served) as client, served.client() as github:
        labelled = post(github, "github.issues", github_delivery(issues_labeled(9)))
        [started] = labelled.json()["started"]
        run = client.get(f"/v1/runs/{started}").json()
        assert (run["flow"], run["target"], run["inputs"]) == ("label-log", "acme/web#9",
                                                               {"label": "deploy"})
        opened = post(github, "github.issues", github_delivery(
            {**issues_labeled(10), "action": "opened"}, delivery="d-opened"))
        relabelled_pr = post(github, "github.issues", github_delivery(
            issues_labeled(11), event="pull_request", delivery="d-pr"))
        assert opened.json()["started"] == relabelled_pr.json()["started"] == []


def test_github_redelivering_a_delivery_is_a_duplicate(served: Served) -> None:
    with served.client() as github:
        request = github_delivery(issues_labeled(12))
        first, again = post(github, "github.issues", request), post(github, "github.issues",
                                                                     request)
        assert (again.status_code, again.json()["state"]) == (202, "duplicate")
        assert again.json()["id"] == first.json()["id"] == request.headers["X-GitHub-Delivery"]


def test_a_button_click_resumes_the_run_waiting_on_its_message(served: Served) -> None:
    with operator(served) as client, served.client() as slack:
        run_id = start(client, "approval", inputs={"ts": "1700000000.100"})["id"]
        other = start(client, "approval", inputs={"ts": "1700000000.200"})["id"]
        assert status_becomes(client, run_id, "waiting")
        answer = post(slack, "slack.actions", slack_interaction(block_actions("1700000000.100")))
        assert answer.status_code == 202, answer.text
        assert (answer.json()["state"], answer.json()["runs"]) == ("delivered", [run_id])
        assert status_becomes(client, run_id, "succeeded")
        decision = client.get(f"/v1/runs/{run_id}").json()["bindings"]["decision"]
        assert decision["event"]["actions"][0]["value"] == "approve"
        assert client.get(f"/v1/runs/{other}").json()["status"] == "waiting"


def test_a_retried_button_click_is_a_duplicate(served: Served) -> None:
    with served.client() as slack:
        click = block_actions("1700000000.300", action_ts="1700000301.000001")
        first = post(slack, "slack.actions", slack_interaction(click))
        again = post(slack, "slack.actions", slack_interaction(click))
        assert (first.json()["state"], again.json()["state"]) == ("buffered", "duplicate")
        assert first.json()["id"] == "1700000301.000001"


def test_a_slash_command_starts_a_triggered_run(served: Served) -> None:
    with operator(served) as client, served.client() as slack:
        answer = post(slack, "slack.commands", slack_form(slash_command("web")))
        assert answer.status_code == 202, answer.text
        event = answer.json()
        assert (event["data"]["command"], event["data"]["text"]) == ("/deploy", "web")
        [run_id] = event["started"]
        assert status_becomes(client, run_id, "succeeded")
        run = client.get(f"/v1/runs/{run_id}").json()
        assert (run["flow"], run["target"], run["inputs"]) == ("deploy", "web",
                                                               {"service": "web"})
        again = post(slack, "slack.commands", slack_form(slash_command("web")))
        assert (again.json()["state"], again.json()["started"]) == ("duplicate", [run_id])


def test_an_events_api_callback_is_recorded_and_its_retry_is_a_duplicate(
        served: Served) -> None:
    with served.client() as slack:
        first = post(slack, "slack.events", slack_json(app_mention()))
        retried = post(slack, "slack.events", slack_json(
            app_mention(), **{"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}))
        assert (first.status_code, first.json()["state"]) == (202, "buffered")
        assert (first.json()["id"], retried.json()["state"]) == ("Ev0LAN670R", "duplicate")
        assert first.json()["data"]["event"]["channel"] == "C0LAN2Q65"


def test_a_retry_of_a_delivery_that_never_arrived_is_recorded(served: Served) -> None:
    with served.client() as slack:
        retried = post(slack, "slack.events", slack_json(
            app_mention(event_id="Ev0NEW"), **{"X-Slack-Retry-Num": "2"}))
        assert (retried.status_code, retried.json()["state"]) == (202, "buffered")


def test_slack_url_verification_is_answered_with_its_challenge(served: Served) -> None:
    verification: dict[str, Any] = {
        "token": "Jhj5dZrVaK7ZwHHjRyZWjbDl", "type": "url_verification",
        "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}
    with served.client() as slack:
        answer = post(slack, "slack.events", slack_json(verification))
        assert (answer.status_code, answer.json()) == (200, {
            "challenge": verification["challenge"]})


def test_a_slash_command_signed_with_another_secret_is_a_401(served: Served) -> None:
    request = slack_form(slash_command("web"))
    forged = VendorRequest(request.body.replace(b"web", b"api"), request.headers)
    with served.client() as slack:
        answer = post(slack, "slack.commands", forged)
        assert answer.status_code == 401
        assert answer.json()["error"]["message"] == (
            "the X-Slack-Signature signature does not match the body signed with this event "
            "type's secret")


def test_the_flows_api_and_page_show_each_key_with_its_path(served: Served) -> None:
    with operator(served) as client:
        listed = {e["type"]: e for e in client.get("/v1/flows").json()["events"]}
        page = client.get("/flows").text
    assert listed["github.issues"]["correlate_paths"] == {"issue": "issue.number",
                                                          "repo": "repository.full_name"}
    assert listed["slack.commands"]["correlate_paths"] == {"channel_id": "channel_id"}
    assert '<td class="mono">issue: issue.number, repo: repository.full_name</td>' in page
    assert '<td class="mono">channel_id</td>' in page

"""Requests shaped and signed as GitHub and Slack send them, built here independently of
tarry's own signing code.

The payloads follow the vendors' documentation (trimmed of fields nobody reads here, keeping
their nesting): GitHub's ``issues`` webhook with ``action: labeled``
(docs.github.com, "Webhook events and payloads"), Slack's ``block_actions`` payload of a button
click, a slash command's form and an Events API ``app_mention`` callback (api.slack.com). The
signatures are computed as each vendor documents: GitHub's ``X-Hub-Signature-256`` is
``sha256=`` and the hex HMAC-SHA256 of the body; Slack's ``X-Slack-Signature`` is ``v0=`` and
the hex HMAC-SHA256 of ``v0:{X-Slack-Request-Timestamp}:{body}``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

__all__ = ["GITHUB_SECRET", "SLACK_SECRET", "VendorRequest", "app_mention", "block_actions",
           "github_delivery", "issues_labeled", "slack_form", "slack_interaction", "slack_json",
           "slash_command"]

GITHUB_SECRET = "gh-webhook-secret"
SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"


@dataclass(frozen=True)
class VendorRequest:
    """A request body and the headers its sender puts on it."""

    body: bytes
    headers: dict[str, str]


def issues_labeled(number: int, repo: str = "acme/web") -> dict[str, Any]:
    """GitHub's ``issues`` delivery for a label put on issue ``number`` of ``repo``."""
    owner, name = repo.split("/")
    user = {"login": "octocat", "id": 1, "type": "User", "site_admin": False}
    return {
        "action": "labeled",
        "issue": {"url": f"https://api.github.com/repos/{repo}/issues/{number}",
                  "id": 1000 + number, "number": number, "title": "Deploy the fix",
                  "user": user, "state": "open", "locked": False, "assignees": [],
                  "labels": [{"id": 208045946, "name": "deploy", "color": "f29513",
                              "default": False}],
                  "comments": 0, "created_at": "2026-03-01T09:00:00Z",
                  "updated_at": "2026-03-01T09:05:00Z", "closed_at": None,
                  "author_association": "OWNER", "body": "Please deploy."},
        "label": {"id": 208045946, "name": "deploy", "color": "f29513", "default": False},
        "repository": {"id": 1296269, "name": name, "full_name": repo, "private": False,
                       "owner": {**user, "login": owner}, "default_branch": "main"},
        "sender": user,
    }


def github_delivery(payload: dict[str, Any], *, event: str = "issues",
                    delivery: str = "72d3162e-cc78-11e3-81ab-4c9367dc0958",
                    secret: str = GITHUB_SECRET) -> VendorRequest:
    """A webhook delivery of ``payload`` as GitHub posts it (content type JSON)."""
    body = json.dumps(payload).encode()
    signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return VendorRequest(body, {
        "Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/044aadd",
        "X-GitHub-Event": event, "X-GitHub-Delivery": delivery,
        "X-GitHub-Hook-ID": "292430182", "X-Hub-Signature-256": f"sha256={signature}"})


def block_actions(message_ts: str, value: str = "approve",
                  action_ts: str = "1700000123.456789") -> dict[str, Any]:
    """Slack's interactive payload of a click on a button of the message ``message_ts``."""
    return {
        "type": "block_actions",
        "user": {"id": "U0CA5", "username": "amy", "name": "amy", "team_id": "T3MDE"},
        "api_app_id": "A0CA5", "token": "Shh_its_a_seekrit",
        "container": {"type": "message", "message_ts": message_ts, "channel_id": "C0CA5",
                      "is_ephemeral": False},
        "trigger_id": "12321423423.333649436676.d8c1bb837935619ccad0f624c448ffb3",
        "team": {"id": "T3MDE", "domain": "acme"},
        "channel": {"id": "C0CA5", "name": "sales-ops"},
        "message": {"type": "message", "ts": message_ts, "text": "Approve the ACME deal?"},
        "response_url": "https://hooks.slack.com/actions/T3MDE/1/abc",
        "actions": [{"action_id": "approve", "block_id": "decision",
                     "text": {"type": "plain_text", "text": "Approve", "emoji": True},
                     "value": value, "type": "button", "action_ts": action_ts}],
    }


def slash_command(text: str = "web", command: str = "/deploy") -> dict[str, str]:
    """The form fields of a Slack slash command."""
    return {"token": "gIkuvaNzQIHg97ATvDxqgjtO", "team_id": "T0001",
            "team_domain": "example", "enterprise_id": "E0001",
            "enterprise_name": "Globular Construct Inc", "channel_id": "C2147483705",
            "channel_name": "test", "user_id": "U2147483697", "user_name": "Steve",
            "command": command, "text": text, "api_app_id": "A123456",
            "is_enterprise_install": "false",
            "response_url": "https://hooks.slack.com/commands/1234/5678",
            "trigger_id": "13345224609.738474920.8088930838d88f008e0"}


def app_mention(channel: str = "C0LAN2Q65", event_id: str = "Ev0LAN670R") -> dict[str, Any]:
    """Slack's Events API callback for a mention of the app in ``channel``."""
    return {"token": "ZZZZZZWSxiZZZ2yIvs3peJ", "team_id": "T061EG9R6", "api_app_id": "A0MDYCDME",
            "event": {"type": "app_mention", "user": "U061F7AUR",
                      "text": "<@U0LAN0Z89> is it everything a river should be?",
                      "ts": "1515449522.000016", "channel": channel,
                      "event_ts": "1515449522000016"},
            "type": "event_callback", "event_id": event_id, "event_time": 1515449522,
            "authed_users": ["U0LAN0Z89"]}


def slack_json(payload: dict[str, Any], **headers: str) -> VendorRequest:
    """An Events API request of ``payload``, signed now."""
    return _slack(json.dumps(payload).encode(), "application/json", headers)


def slack_form(fields: dict[str, str], **headers: str) -> VendorRequest:
    """A form request (an interaction's ``payload=`` or a slash command), signed now."""
    return _slack(urlencode(fields).encode(), "application/x-www-form-urlencoded", headers)


def slack_interaction(payload: dict[str, Any], **headers: str) -> VendorRequest:
    """An interactive request: the JSON payload in the form field ``payload``."""
    return slack_form({"payload": json.dumps(payload)}, **headers)


def _slack(body: bytes, content_type: str, extra: dict[str, str]) -> VendorRequest:
    stamp = str(int(time.time()))
    signed = b"v0:" + stamp.encode() + b":" + body
    signature = hmac.new(SLACK_SECRET.encode(), signed, hashlib.sha256).hexdigest()
    return VendorRequest(body, {"Content-Type": content_type,
                                "X-Slack-Request-Timestamp": stamp,
                                "X-Slack-Signature": f"v0={signature}", **extra})

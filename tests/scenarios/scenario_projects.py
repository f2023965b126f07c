"""A throwaway project to run scenarios in: tarry.toml, events.yaml, flows and scenario files.

``ScenarioProject.create(root)`` writes a project with two flows: ``deal-approval`` (SPEC 3.1:
ask on Slack, wait 24h for the approval) and ``vendor-confirmation`` (ask a vendor by mail,
wait up to 14 days for the reply, nudging every 3 days).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

from tarry.config import load_settings
from tarry.scenarios import ScenarioResult, load_scenario, run_scenario

CONFIG = """\
[tarry]
database = "sqlite:///state/tarry.db"
"""

MANIFESTS = """\
events:
  slack.approval:
    correlate_on: [message]
    schema:
      type: object
      required: [message, approved]
      properties:
        approved: { type: boolean }
  vendor.reply:
    correlate_on: [thread]
"""

APPROVAL_FLOW = """\
flow: deal-approval
inputs:
  deal: { type: object, required: true }
steps:
  - ask:
      slack.post: { channel: "#sales-ops", text: "Approve {{ deal.name }}?" }
  - approval:
      wait_for: slack.approval
      match: { message: "{{ ask.ts }}" }
      timeout: 24h
  - decided:
      if: "{{ approval.status == 'received' and approval.event.approved }}"
      exit: approved
  - expired:
      exit: no-answer
"""

VENDOR_FLOW = """\
flow: vendor-confirmation
inputs:
  vendor: { type: string, required: true }
steps:
  - ask:
      mail.send: { to: "{{ vendor }}", text: "Please confirm the order." }
  - reply:
      wait_for: vendor.reply
      match: { thread: "{{ ask.thread }}" }
      timeout: 14d
      remind:
        every: 3d
        steps:
          - nudge:
              chat.nudge: { to: "{{ vendor }}", text: "Still waiting for your confirmation." }
  - confirmed:
      if: "{{ reply.status == 'received' }}"
      exit: confirmed
  - escalated:
      exit: no-reply
"""

APPROVED = """\
scenario: approved-after-two-hours
flow: flows/deal-approval.yaml
inputs: { deal: { name: ACME } }
target: acme/web#7
start: "2026-03-02T09:00:00Z"
stub:
  slack.post: { ts: "1700000000.100" }
events:
  - after: 2h
    type: slack.approval
    data: { message: "1700000000.100", approved: true }
    id: e1
expect:
  status: succeeded
  exit: approved
  reason: null
  bindings: { approval.status: received, approval.received_at: "2026-03-02T11:00:00.000Z" }
  calls: { slack.post: 1 }
  events: [delivered]
"""


@dataclass
class ScenarioProject:
    """A project folder, with ways to write files into it and run scenarios in it."""

    root: Path

    @classmethod
    def create(cls, root: Path) -> ScenarioProject:
        """A project in ``root`` with the two flows and their manifests."""
        project = cls(root)
        project.write("tarry.toml", CONFIG)
        project.write("events.yaml", MANIFESTS)
        project.write("flows/deal-approval.yaml", APPROVAL_FLOW)
        project.write("flows/vendor-confirmation.yaml", VENDOR_FLOW)
        return project

    def write(self, relative: str, text: str) -> Path:
        """Write ``text`` (dedented) to ``relative`` under the root."""
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def scenario(self, name: str, text: str) -> Path:
        """Write ``scenarios/<name>.yaml``."""
        return self.write(f"scenarios/{name}.yaml", text)

    async def run(self, path: Path, *, store_url: str | None = None) -> ScenarioResult:
        """Load and run the scenario file at ``path`` (on ``store_url``, or a fresh SQLite).

        The file is loaded by its path relative to the root (the working directory), so
        positions read ``scenarios/….yaml:line:col``.
        """
        scenario = load_scenario(path.relative_to(self.root))
        directory = self.root / "runs" / path.stem
        directory.mkdir(parents=True, exist_ok=True)
        return await run_scenario(scenario, load_settings(self.root), directory=directory,
                                  store_url=store_url)

    async def run_text(self, text: str, *, store_url: str | None = None) -> ScenarioResult:
        """Write ``text`` as ``scenarios/s.yaml`` and run it."""
        return await self.run(self.scenario("s", text), store_url=store_url)

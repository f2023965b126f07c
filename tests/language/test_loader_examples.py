"""The examples of the language reference load into exactly the expected model objects."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from tarry.language.loader import parse_flow
from tarry.language.model import (
    Action,
    EventAlternative,
    Exit,
    Flow,
    ForEach,
    HoldAfter,
    InputSpec,
    Position,
    Remind,
    Repeat,
    Scope,
    Step,
    Template,
    Wait,
    WaitFor,
)

FILE = "flows/deal-approval.yaml"

DEAL_APPROVAL = """\
flow: deal-approval            # required; [a-z0-9][a-z0-9_.-]*
description: Ask sales ops to approve a deal.
timezone: Europe/Berlin        # optional IANA zone for zone-less dates (3.6)
inputs:                        # optional; each input: type, required, default
  deal: { type: object, required: true }
hold:                          # optional start gate (section 5)
  - after: "2026-09-01T09:00:00Z"
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


def at(line: int, column: int) -> Position:
    """A position in the example file."""
    return Position(FILE, line, column)


def test_file_shape_example() -> None:
    flow = parse_flow(DEAL_APPROVAL, FILE, actions={"slack.post"})
    assert flow == Flow(
        name="deal-approval",
        description="Ask sales ops to approve a deal.",
        timezone="Europe/Berlin",
        inputs={"deal": InputSpec("deal", "object", required=True)},
        hold=(HoldAfter(datetime(2026, 9, 1, 9, tzinfo=UTC), at(7, 5)),),
        body=Scope((
            Step("ask", Action("slack.post", {"channel": "#sales-ops",
                                              "text": "Approve {{ deal.name }}?"}), at(9, 5)),
            Step("approval", WaitFor(
                alternatives=(EventAlternative("slack.approval", {"message": "{{ ask.ts }}"},
                                               at(12, 17)),),
                timeout=timedelta(hours=24)), at(11, 5)),
            Step("decided", Exit("approved"), at(15, 5),
                 if_=Template("{{ approval.status == 'received' and "
                              "approval.event.approved }}")),
            Step("expired", Exit("no-answer"), at(18, 5)),
        )),
        source=DEAL_APPROVAL,
        digest=hashlib.sha256(DEAL_APPROVAL.encode()).hexdigest(),
        path=FILE,
    )


CONSTRUCTS = """\
flow: constructs
inputs:
  hire: { type: object }
  deal: { type: object }
  ticket: { type: object }
  vendors: { type: array }
steps:
  - cooling_off:
      wait: { for: 2d }
  - day_before:
      wait: { until: "{{ hire.start_date | minus(1d) }}" }
  - ask:
      slack.post: { channel: "#sales-ops", text: "Approve {{ deal.name }}?" }
  - approval:
      wait_for: slack.approval
      match: { message: "{{ ask.ts }}" }
      timeout: 24h
      accept: "{{ event.approved is defined }}"   # optional
      remind:                                      # optional
        every: 6h
        steps:
          - nudge:
              slack.post: { channel: "#sales-ops", text: "Still waiting on {{ deal.name }}" }
  - indexed:
      repeat: { every: 30s, max: 20, until: "{{ check.status == 'indexed' }}" }
      steps:
        - check: { search.status: { id: "{{ ticket.id }}" } }
  - replies:
      for_each: "{{ vendors }}"
      as: vendor                 # default: item
      concurrency: 50            # default 1 (sequential)
      steps:
        - ask_vendor: { slack.post: { channel: "{{ vendor.channel }}", text: "Quote?" } }
"""


def test_construct_examples() -> None:
    flow = parse_flow(CONSTRUCTS, "c.yaml", actions={"slack.post", "search.status"})
    steps = [step.construct for step in flow.body.steps]
    assert [step.id for step in flow.body.steps] == [
        "cooling_off", "day_before", "ask", "approval", "indexed", "replies"]
    assert steps[0] == Wait(for_=timedelta(days=2))
    assert steps[1] == Wait(until=Template("{{ hire.start_date | minus(1d) }}"))
    assert steps[3] == WaitFor(
        alternatives=(EventAlternative("slack.approval", {"message": "{{ ask.ts }}"},
                                       Position("c.yaml", 15, 17)),),
        timeout=timedelta(hours=24),
        accept=Template("{{ event.approved is defined }}"),
        remind=Remind(every=timedelta(hours=6), max=None, steps=Scope((
            Step("nudge", Action("slack.post", {"channel": "#sales-ops",
                                                "text": "Still waiting on {{ deal.name }}"}),
                 Position("c.yaml", 22, 13)),))),
    )
    assert steps[4] == Repeat(
        max=20, every=timedelta(seconds=30), until=Template("{{ check.status == 'indexed' }}"),
        steps=Scope((Step("check", Action("search.status", {"id": "{{ ticket.id }}"}),
                          Position("c.yaml", 27, 11)),)))
    assert steps[5] == ForEach(
        items="{{ vendors }}", as_="vendor", concurrency=50,
        steps=Scope((Step("ask_vendor", Action("slack.post", {"channel": "{{ vendor.channel }}",
                                                              "text": "Quote?"}),
                          Position("c.yaml", 33, 11)),)))

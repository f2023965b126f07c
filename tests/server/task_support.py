"""A project whose flows ask people (tasks, SPEC 3.7) for the dashboard's task tests: a review
with a form of every kind of field, assigned to ops and alice, reminded daily; a triage for
ops alone with no form; and a count for anyone, whose form can only be typed as JSON."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from server_support import write_project

from tarry.engine.runtime import Engine
from tarry.model import RunRecord, TaskRecord

REVIEW_FLOW = """\
flow: review
inputs:
  request: { type: string, required: true }
steps:
  - review:
      ask:
        title: "Review the reply to {{ request }}"
        details: "The amount is missing.\\nCheck the invoice."
        assign: [ops, alice]
        form:
          type: object
          required: [note, amount]
          properties:
            note: { type: string, title: Note, description: What to tell the sender }
            amount: { type: integer, minimum: 1, description: The corrected amount in EUR }
            ratio: { type: number }
            urgent: { type: boolean, default: false }
            channel: { enum: [email, chat], description: How to answer }
            tags: { type: array, items: { type: string } }
        outcomes: [accept, correct]
      timeout: 3d
      remind:
        every: 1d
        steps:
          - nudge: { log: { message: "still waiting for a review of {{ request }}" } }
  - decided:
      exit: reviewed
"""

TRIAGE_FLOW = """\
flow: triage
steps:
  - triage:
      ask:
        title: Triage the incident
        assign: [ops]
        outcomes: [go, stop]
      timeout: 2d
  - decided:
      exit: triaged
"""

COUNT_FLOW = """\
flow: count
steps:
  - count:
      ask:
        title: Count the crates
        form:
          type: object
          minProperties: 1
          additionalProperties: { type: integer }
        outcomes: [counted]
      timeout: 1d
  - decided:
      exit: counted
"""

FLOWS = {"review": REVIEW_FLOW, "triage": TRIAGE_FLOW, "count": COUNT_FLOW}

TOKENS = {"TARRY_API_TOKENS": "alice=alice-token,bob=bob-token,ops=ops-token"}
"""Three principals: alice and ops may review; ops alone may triage; anyone may count."""

START = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
"""When the virtual clock of the page tests starts."""


def write_tasks_project(root: Path, store_url: str) -> Path:
    """A project with the asking flows, on ``store_url``."""
    return write_project(root, store_url, flows=FLOWS)


def drive(engine: Engine, run_id: str) -> RunRecord:
    """Execute the run now, in this thread, until it suspends or ends (for a server
    without a worker, on a virtual clock)."""
    return asyncio.run(engine.drive(run_id))


def ask(engine: Engine, flow: str, **inputs: str) -> TaskRecord:
    """Start ``flow`` and drive it to its task; the open task."""
    run = engine.start(flow, inputs)
    drive(engine, run.id)
    found = [task for task in engine.tasks(limit=1000) if task.run_id == run.id]
    assert len(found) == 1, f"run {run.id} of {flow} opened {len(found)} tasks"
    return found[0]

"""What a trigger starts, evaluated without a store: filters, computed targets and inputs,
and a broken expression carried as a problem instead of silently starting nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from textwrap import dedent

from tarry.language.loader import parse_flow
from tarry.language.manifests import parse_manifests
from tarry.language.model import Flow, ScheduleTrigger
from tarry.triggers.starts import event_starts, schedule_start

NOW = datetime(2026, 10, 23, 14, 40, tzinfo=UTC)
MANIFESTS = parse_manifests(dedent("""
    events:
      forge.label:
        correlate_on: [repo]
      forge.push:
        correlate_on: [repo]
"""), "events.yaml")


def flow(triggers: str, name: str = "deploy") -> Flow:
    """A flow with input ``repo`` and the given ``on:`` list."""
    return parse_flow(f"flow: {name}\ninputs:\n  repo: {{ type: string, required: true }}\n"
                      f"on:\n{dedent(triggers)}steps:\n  - done: {{ exit: ok }}\n",
                      f"{name}.yaml", manifests=MANIFESTS)


DEPLOY = flow("""\
- event: forge.label
  if: "{{ event.label == 'deploy' }}"
  target: "{{ event.repo }}#{{ event.number }}"
  inputs: { repo: "{{ event.repo }}" }
""")
LABEL = {"repo": "acme/web", "number": 7, "label": "deploy"}


def test_a_matching_event_starts_a_run_with_its_computed_target_and_inputs() -> None:
    [start] = event_starts([DEPLOY], "forge.label", "ev-1", LABEL, NOW)
    assert (start.flow.name, start.inputs, start.target, start.problem) == (
        "deploy", {"repo": "acme/web"}, "acme/web#7", None)
    assert start.origin == {"trigger": "event", "event_type": "forge.label",
                            "event_id": "ev-1", "index": 0}


def test_an_event_the_if_rejects_starts_nothing() -> None:
    assert event_starts([DEPLOY], "forge.label", "ev-1", {**LABEL, "label": "docs"}, NOW) == []


def test_an_event_of_another_type_starts_nothing() -> None:
    assert event_starts([DEPLOY], "forge.push", "ev-1", LABEL, NOW) == []


def test_every_matching_trigger_of_every_flow_starts_one_run() -> None:
    audit = flow("""\
- event: forge.label
  inputs: { repo: "{{ event.repo }}" }
- event: forge.label
  inputs: { repo: "mirror/{{ event.repo }}" }
""", name="audit")
    starts = event_starts([DEPLOY, audit], "forge.label", "ev-1", LABEL, NOW)
    assert [(s.flow.name, s.inputs["repo"]) for s in starts] == [
        ("deploy", "acme/web"), ("audit", "acme/web"), ("audit", "mirror/acme/web")]


def test_a_target_over_a_missing_field_is_a_start_carrying_the_problem() -> None:
    [start] = event_starts([DEPLOY], "forge.label", "ev-1",
                           {"repo": "acme/web", "label": "deploy"}, NOW)
    assert start.problem == ("trigger at line 5: 'event' has no key 'number': "
                             "{{ event.repo }}#{{ event.number }}")


def test_a_schedule_occurrence_sees_its_instant_and_has_a_unique_key() -> None:
    nightly = flow("""\
- schedule: "0 9 * * *"
  timezone: Europe/Berlin
  target: nightly
  inputs: { repo: "report-{{ event.scheduled_at }}" }
""", name="report")
    trigger = nightly.triggers[0]
    assert isinstance(trigger, ScheduleTrigger)
    at = datetime(2026, 10, 24, 7, tzinfo=UTC)
    start = schedule_start(nightly, trigger, "report:abc", at, NOW)
    assert (start.inputs, start.target, start.key, start.origin) == (
        {"repo": "report-2026-10-24T07:00:00.000Z"}, "nightly",
        "report:abc@2026-10-24T07:00:00.000Z",
        {"trigger": "schedule", "schedule": "report:abc",
         "scheduled_at": "2026-10-24T07:00:00.000Z"})

"""Every load-time refusal of a flow's ``on:`` triggers (SPEC 3.8), with its exact message.

Messages are ``line:column: message`` (the file name ``flow.yaml`` left out).
"""

from __future__ import annotations

from textwrap import dedent

import pytest

from tarry.errors import LoadError
from tarry.language.loader import parse_flow
from tarry.language.manifests import parse_manifests
from tarry.language.model import EventTrigger, ScheduleTrigger, Template

FILE = "flow.yaml"
MANIFESTS = parse_manifests(dedent("""
    events:
      forge.label:
        correlate_on: [repo]
"""), "events.yaml")

HEAD = """\
flow: deploy
inputs:
  repo: { type: string, required: true }
on:
"""
STEPS = "steps:\n  - done: { exit: ok }\n"


def flow_with(triggers: str) -> str:
    """A flow whose ``on:`` list is ``triggers`` (its first line is line 5)."""
    return HEAD + dedent(triggers).strip("\n") + "\n" + STEPS


def problems(triggers: str) -> list[str]:
    """The problems a flow with these triggers is refused for."""
    with pytest.raises(LoadError) as caught:
        parse_flow(flow_with(triggers), FILE, manifests=MANIFESTS)
    return [str(problem).removeprefix(f"{FILE}:") for problem in caught.value.problems]


def test_an_event_trigger_loads_with_its_condition_target_and_inputs() -> None:
    flow = parse_flow(flow_with("""
        - event: forge.label
          if: "{{ event.label == 'deploy' }}"
          target: "{{ event.repo }}#{{ event.number }}"
          inputs: { repo: "{{ event.repo }}" }
    """), FILE, manifests=MANIFESTS)
    assert flow.triggers == (EventTrigger(
        event="forge.label", pos=flow.triggers[0].pos,
        condition=Template("{{ event.label == 'deploy' }}"),
        target=Template("{{ event.repo }}#{{ event.number }}"),
        inputs={"repo": "{{ event.repo }}"}),)


def test_a_schedule_trigger_loads_with_catch_up_latest_by_default() -> None:
    flow = parse_flow(flow_with("""
        - schedule: "0 9 * * mon-fri"
          timezone: Europe/Berlin
          inputs: { repo: nightly }
    """), FILE, manifests=MANIFESTS)
    assert flow.triggers == (ScheduleTrigger(
        cron="0 9 * * mon-fri", timezone="Europe/Berlin", pos=flow.triggers[0].pos,
        catch_up="latest", inputs={"repo": "nightly"}),)


@pytest.mark.parametrize(("trigger", "expected"), [
    ("""
     - event: forge.lable
       inputs: { repo: x }
     """, ["5:10: unknown event type 'forge.lable' (did you mean 'forge.label'?)"]),
    ("""
     - event: deploy.done
       inputs: { repo: x }
     """, ["5:10: unknown event type 'deploy.done'; declare it under 'events:' in an event "
           "manifest (events.yaml)"]),
    ("""
     - schedule: "61 9 * * *"
       timezone: Europe/Berlin
       inputs: { repo: x }
     """, ["5:13: 'schedule' is not a cron expression (Bad minute): '61 9 * * *' (five fields: "
           "minute hour day-of-month month day-of-week, such as '0 9 * * mon-fri')"]),
    ("""
     - schedule: "0 9 * * *"
       inputs: { repo: x }
     """, ["5:3: missing 'timezone' in a schedule trigger (an IANA zone such as "
           "Europe/Berlin: a schedule fires at local times)"]),
    ("""
     - schedule: "0 9 * * *"
       timezone: Europe/Berlim
       inputs: { repo: x }
     """, ["6:13: unknown timezone 'Europe/Berlim' (did you mean 'Europe/Berlin'?)"]),
    ("""
     - schedule: "0 9 * * *"
       timezone: Europe/Berlin
       catch_up: sometimes
       inputs: { repo: x }
     """, ["7:13: 'catch_up' must be one of latest, none, all, got 'sometimes'"]),
    ("""
     - event: forge.label
       schedule: "0 9 * * *"
     """, ["5:3: a trigger has either 'event' or 'schedule', not both"]),
    ("""
     - cron: "0 9 * * *"
       tz: Europe/Berlin
     """, ["5:3: unknown key 'cron' in a trigger (did you mean 'schedule'?)",
           "5:3: a trigger needs 'event: <type>' or 'schedule: <cron>'",
           "6:3: unknown key 'tz' in a trigger (did you mean 'timezone'?)"]),
    ("""
     - event: forge.label
       when: "{{ event.label == 'deploy' }}"
       inputs: { repo: x }
     """, ["6:3: unknown key 'when' in an event trigger (did you mean 'if'?)"]),
    ("""
     - event: forge.label
       target: "{{ evnt.repo }}"
       inputs: { repo: x }
     """, ["6:11: undefined name 'evnt' (did you mean 'event'?)"]),
    ("""
     - event: forge.label
       inputs: { repo: "{{ run.id }}" }
     """, ["6:19: undefined name 'run' (a trigger's expressions see only 'event')"]),
    ("""
     - event: forge.label
       inputs: { rep: x }
     """, ["5:3: this trigger gives no value for the required input(s) 'repo' (add them under "
           "'inputs:')",
           "6:13: the flow has no input 'rep' (did you mean 'repo'?)"]),
    ("""
     - event: forge.label
       timezone: Europe/Berlin
       inputs: { repo: x }
     """, ["6:3: unknown key 'timezone' in an event trigger (expected one of: debounce, "
           "event, if, inputs, target)"]),
    ("""
     - deploy
     """, ["5:3: a trigger is a mapping with 'event' or 'schedule', got 'deploy'"]),
], ids=["misspelt-type", "undeclared-type", "bad-cron", "no-timezone", "unknown-zone",
        "bad-catch-up", "both-kinds", "near-miss-keys", "if-near-miss", "undefined-name",
        "run-not-in-scope", "inputs", "schedule-key-in-event", "not-a-mapping"])
def test_a_bad_trigger_is_refused(trigger: str, expected: list[str]) -> None:
    assert problems(trigger) == expected


@pytest.mark.parametrize("key", ["trigger", "triggers", "on_event", "cron", "schedule"])
def test_flow_level_near_misses_of_on_point_to_it(key: str) -> None:
    source = f"flow: f\n{key}: []\n{STEPS}"
    with pytest.raises(LoadError) as caught:
        parse_flow(source, FILE, manifests=MANIFESTS)
    assert [str(p).removeprefix(f"{FILE}:") for p in caught.value.problems] == [
        f"2:1: unknown key '{key}' at flow level: a flow's triggers are 'on:', a list of "
        "'- event: <type>' or '- schedule: <cron>'"]


def test_an_empty_on_list_is_refused() -> None:
    with pytest.raises(LoadError) as caught:
        parse_flow(f"flow: f\non: []\n{STEPS}", FILE, manifests=MANIFESTS)
    assert [str(p).removeprefix(f"{FILE}:") for p in caught.value.problems] == [
        "2:5: 'on' must be a non-empty list of triggers, each '- event: <type>' or "
        "'- schedule: <cron>', got an empty list"]

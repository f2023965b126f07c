"""Every load-time refusal of a flow's ``throttle`` and a trigger's ``debounce``, with its
exact message (``line:column: message``, the file name left out)."""

from __future__ import annotations

from datetime import timedelta
from textwrap import dedent

import pytest

from tarry.errors import LoadError
from tarry.language.loader import parse_flow
from tarry.language.manifests import parse_manifests
from tarry.language.model import Debounce, EventTrigger, Template, Throttle

FILE = "flow.yaml"
MANIFESTS = parse_manifests(dedent("""
    events:
      forge.push:
        correlate_on: [repo]
"""), "events.yaml")

HEAD = """\
flow: onboard
inputs:
  customer: { type: string, required: true }
"""
STEPS = "steps:\n  - done: { exit: ok }\n"


def throttled(throttle: str) -> str:
    """A flow whose ``throttle:`` is ``throttle`` (on line 4)."""
    return f"{HEAD}throttle: {throttle}\n{STEPS}"


def debounced(debounce: str, *, more: str = "") -> str:
    """A flow with one push trigger whose ``debounce:`` is ``debounce`` (on line 7)."""
    return (f"{HEAD}{more}on:\n  - event: forge.push\n"
            "    inputs: { customer: \"{{ event.repo }}\" }\n"
            f"    debounce: {debounce}\n{STEPS}")


def problems(source: str) -> list[str]:
    """The problems ``source`` is refused for."""
    with pytest.raises(LoadError) as caught:
        parse_flow(source, FILE, manifests=MANIFESTS)
    return [str(problem).removeprefix(f"{FILE}:") for problem in caught.value.problems]


def test_a_throttle_loads_with_its_key_limit_and_period() -> None:
    flow = parse_flow(throttled('{ key: "{{ customer }}", limit: 100, per: 1m }'), FILE)
    assert flow.throttle == Throttle(Template("{{ customer }}"), 100, timedelta(minutes=1))


def test_a_throttle_without_a_key_has_one_key_for_the_flow() -> None:
    flow = parse_flow(throttled("{ limit: 5, per: 1h }"), FILE)
    assert flow.throttle == Throttle(None, 5, timedelta(hours=1))


@pytest.mark.parametrize(("throttle", "expected"), [
    ('{ key: "{{ customer }}", limit: 0, per: 1m }',
     ["4:43: 'limit' must be a positive integer, got 0"]),
    ("{ limit: 2.5, per: 1m }", ["4:20: 'limit' must be a positive integer, got 2.5"]),
    ('{ limit: "3", per: 1m }', ["4:20: 'limit' must be a positive integer, got '3'"]),
    ("{ limit: 3, per: 0s }", ["4:28: 'per' must be a duration longer than 0s, got '0s'"]),
    ("{ limit: 3, per: 1 month }",
     ["4:28: '1 month' is not a duration (use e.g. 500ms, 30s, 15m, 24h, 2d, "
      "1w, 1h30m or ISO 8601 like PT30S)"]),
    ("{ limit: 3, per: 1mo }",
     ["4:28: duration '1mo' uses months or years, whose length is ambiguous; use days "
      "or weeks"]),
    ('{ key: "{{ custmer }}", limit: 3, per: 1m }',
     ["4:18: undefined name 'custmer' (did you mean 'customer'?)"]),
    ('{ key: "{{ event.repo }}", limit: 3, per: 1m }',
     ["4:18: undefined name 'event' ('event' is only defined in 'accept')"]),
    ("{ limit: 3 }", ["4:11: missing 'per' in 'throttle' (the period, such as 1m)"]),
    ("{ per: 1m }",
     ["4:11: missing 'limit' in 'throttle' (how many runs may start per period, such as "
      "100)"]),
    ("{ limit: 3, period: 1m }", ["4:23: unknown key 'period' in 'throttle' (did you mean "
                                  "'per'?)"]),
    ("{ limt: 3, per: 1m }", ["4:13: unknown key 'limt' in 'throttle' (did you mean "
                              "'limit'?)"]),
    ("100", ["4:11: 'throttle' must be a mapping such as { key: \"{{ customer }}\", limit: "
             "100, per: 1m }, got 100"]),
])
def test_a_bad_throttle_is_refused(throttle: str, expected: list[str]) -> None:
    assert problems(throttled(throttle)) == expected


def test_a_debounce_loads_with_its_key_period_and_max() -> None:
    flow = parse_flow(debounced('{ key: "{{ event.repo }}", period: 5m, max: 30m }'), FILE,
                      manifests=MANIFESTS)
    [trigger] = flow.triggers
    assert isinstance(trigger, EventTrigger)
    assert trigger.debounce == Debounce(Template("{{ event.repo }}"), timedelta(minutes=5),
                                        timedelta(minutes=30))


@pytest.mark.parametrize(("debounce", "expected"), [
    ("{ period: 10m, max: 5m }",
     ["7:35: 'max' (5m) must be at least 'period' (10m) (the longest a start is put off "
      "cannot be shorter than the quiet period it waits for)"]),
    ("{ period: soon }",
     ["7:25: 'soon' is not a duration (use e.g. 500ms, 30s, 15m, 24h, 2d, 1w, "
      "1h30m or ISO 8601 like PT30S)"]),
    ("{ period: 0s }", ["7:25: 'period' must be a duration longer than 0s, got '0s'"]),
    ("{ max: 5m }",
     ["7:15: missing 'period' in 'debounce' (how long after the last event the run starts, "
      "such as 5m)"]),
    ("{ period: 5m, delay: 1m }",
     ["7:29: unknown key 'delay' in 'debounce' (did you mean 'period'?)"]),
    ("{ period: 5m, maxx: 1h }",
     ["7:29: unknown key 'maxx' in 'debounce' (did you mean 'max'?)"]),
    ('{ key: "{{ customer }}", period: 5m }',
     ["7:22: undefined name 'customer' (a trigger's expressions see only 'event')"]),
])
def test_a_bad_debounce_is_refused(debounce: str, expected: list[str]) -> None:
    assert problems(debounced(debounce)) == expected


def test_a_debounce_on_a_schedule_trigger_is_refused() -> None:
    source = (f"{HEAD}on:\n  - schedule: \"0 9 * * *\"\n    timezone: UTC\n"
              "    inputs: { customer: acme }\n    debounce: { period: 5m }\n" + STEPS)
    assert problems(source) == [
        "8:5: 'debounce' applies to event triggers only (a schedule fires once per "
        "occurrence: nothing to debounce)"]


def test_a_debounce_on_a_held_flow_is_refused() -> None:
    source = debounced("{ period: 5m }", more="hold:\n  - check: jira\n")
    assert problems(source) == [
        "7:5: a flow with 'hold:' cannot debounce its triggers (a debounced start is put "
        "off until its burst ends, a held one until its hold clears); drop one of them"]

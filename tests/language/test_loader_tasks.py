"""``ask:`` at load (SPEC 3.7): what it reads as, and every refusal with its exact message.

Messages are written ``line:column: message``; a snippet's first step is on line 6 of the
file.
"""

from __future__ import annotations

from datetime import timedelta
from textwrap import dedent, indent

import pytest

from tarry.errors import LoadError
from tarry.language.loader import parse_flow
from tarry.language.model import Ask, Remind, Scope, Template

FILE = "flow.yaml"


def flow_of(steps: str) -> str:
    return f"flow: f\ninputs:\n  who: {{ type: string }}\nsteps:\n{indent(dedent(steps), '  ')}"


def problems(steps: str) -> list[str]:
    with pytest.raises(LoadError) as caught:
        parse_flow(flow_of(steps), FILE, actions=("slack.post",))
    return [str(problem).removeprefix(f"{FILE}:") for problem in caught.value.problems]


def test_an_ask_reads_as_its_parts() -> None:
    flow = parse_flow(flow_of("""
        - review:
            ask:
              title: "Review {{ who }}"
              details: Check the amount.
              assign: [ops, "{{ who }}"]
              form: { type: object, properties: { note: { type: string } } }
              outcomes: [accept, correct]
            timeout: "{{ 2d }}"
            remind: { every: 1d, max: 2, steps: [ { n: { slack.post: { text: hi } } } ] }
        """), FILE, actions=("slack.post",))
    ask = flow.body.steps[0].construct
    assert isinstance(ask, Ask)
    assert (ask.title, ask.details, ask.assign, ask.outcomes) == (
        "Review {{ who }}", "Check the amount.", ["ops", "{{ who }}"], ("accept", "correct"))
    assert ask.form == {"type": "object", "properties": {"note": {"type": "string"}}}
    assert ask.timeout == Template("{{ 2d }}")
    assert isinstance(ask.remind, Remind)
    assert (ask.remind.every, ask.remind.max) == (timedelta(days=1), 2)
    assert isinstance(ask.remind.steps, Scope)


@pytest.mark.parametrize(("steps", "expected"), [
    ("""
     - review:
         ask: { title: Go?, outcomes: [go] }
     """, ["7:7: missing 'timeout' in step 'review' (every task is bounded: a duration, an "
           "instant or an expression)"]),
    ("""
     - review:
         ask: { title: Go?, outcomes: [] }
         timeout: 1h
     """, ["7:36: 'outcomes' must be a list of one or more outcome names, such as "
           "[approve, reject], got an empty list"]),
    ("""
     - review:
         ask: { title: Go? }
         timeout: 1h
     """, ["7:12: missing 'outcomes' in 'ask' (the decisions, one button each, such as "
           "[approve, reject])"]),
    ("""
     - review:
         ask: { outcomes: [go] }
         timeout: 1h
     """, ["7:12: missing 'title' in 'ask' (what the person is asked)"]),
    ("""
     - review:
         ask: { titel: Go?, outcomes: [go] }
         timeout: 1h
     """, ["7:14: unknown key 'titel' in 'ask' (did you mean 'title'?)"]),
    ("""
     - review:
         ask: { title: Go?, outcomes: [go], assignee: [ops] }
         timeout: 1h
     """, ["7:42: unknown key 'assignee' in 'ask' (did you mean 'assign'?)"]),
    ("""
     - review:
         ask: { title: Go?, outcomes: [go, Stop, go] }
         timeout: 1h
     """, ["7:41: 'outcome' must be a name matching [a-z0-9][a-z0-9_.-]*, got 'Stop'",
           "7:47: outcome 'go' is listed twice"]),
    ("""
     - review:
         ask: { title: Go?, outcomes: [go], form: { type: object, properties: 3 } }
         timeout: 1h
     """, ["7:76: 'form' is not a valid JSON Schema: 3 is not of type 'object'"]),
    ("""
     - review:
         ask: { title: Go?, outcomes: [go], form: { type: string } }
         timeout: 1h
     """, ["7:48: 'form' must describe an object (type: object, with properties), got type "
           "'string'"]),
    ("""
     - review:
         ask: { title: Go?, outcomes: [go], assign: [] }
         timeout: 1h
     """, ["7:50: 'assign' must be a list of one or more principal names, such as "
           "[ops, alice], or an expression giving them, got an empty list"]),
    ("""
     - review:
         ask: { title: "Go {{ whom }}?", outcomes: [go] }
         timeout: 1h
     """, ["7:21: undefined name 'whom' (did you mean 'who'?)"]),
    ("""
     - review:
         ask: { title: Go?, outcomes: [go] }
         timeout: 1h
         accept: "{{ true }}"
     """, ["9:7: 'accept' is only allowed with 'wait_for'"]),
    ("""
     - review:
         ask: Go?
         timeout: 1h
     """, ["7:12: 'ask' must be a mapping such as { title: \"Approve?\", outcomes: [approve, "
           "reject] }, got 'Go?'"]),
])
def test_refusals(steps: str, expected: list[str]) -> None:
    assert problems(steps) == expected

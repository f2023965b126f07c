"""Business calendars in flow files: ``{for, calendar}`` where a flow waits, ``window:`` on a
flow or a step, ``plus``/``minus`` with a calendar — and every refusal, with its position."""

from __future__ import annotations

from datetime import timedelta
from textwrap import dedent

import pytest

from tarry.errors import LoadError
from tarry.language.loader import parse_flow
from tarry.language.model import Ask, BusinessTime, Flow, Repeat, Template, Wait, WaitFor

FILE = "flow.yaml"
CALENDARS = ("support", "deploy")


def load(text: str, calendars: tuple[str, ...] | None = CALENDARS) -> Flow:
    return parse_flow(dedent(text).lstrip("\n"), FILE, calendars=calendars)


def problems(text: str, calendars: tuple[str, ...] | None = CALENDARS) -> list[str]:
    with pytest.raises(LoadError) as caught:
        load(text, calendars)
    return [str(problem).removeprefix(f"{FILE}:") for problem in caught.value.problems]


def test_every_waiting_duration_takes_business_time() -> None:
    flow = load("""
        flow: f
        window: deploy
        steps:
          - nap:
              wait: { for: { for: 16h, calendar: support } }
          - ask_it:
              ask: { title: "ok?", outcomes: [yes] }
              timeout: { for: 2d, calendar: support }
              remind:
                every: { for: 4h, calendar: support }
                steps:
                  - nudge: { log: { message: hi } }
          - poll:
              repeat: { every: { for: "{{ 1h * 2 }}", calendar: support }, max: 3,
                        until: "{{ true }}" }
              steps:
                - tick: { log: { message: tick } }
          - ship:
              window: deploy
              log: { message: "{{ run.started_at | plus(2d, 'support') }}" }
        """)
    nap, ask, poll, ship = flow.body.steps
    assert flow.window == "deploy"
    assert isinstance(nap.construct, Wait)
    assert nap.construct.for_ == BusinessTime(timedelta(hours=16), "support")
    assert isinstance(ask.construct, Ask)
    assert ask.construct.timeout == BusinessTime(timedelta(days=2), "support")
    assert ask.construct.remind is not None
    assert ask.construct.remind.every == BusinessTime(timedelta(hours=4), "support")
    assert isinstance(poll.construct, Repeat)
    assert poll.construct.every == BusinessTime(Template("{{ 1h * 2 }}"), "support")
    assert ship.window == "deploy"


def test_a_wait_for_deadline_in_business_time() -> None:
    flow = load("""
        flow: f
        steps:
          - reply:
              wait_for: customer.reply
              match: { ticket: "1" }
              timeout: { for: 1d4h, calendar: support }
        """)
    wait = flow.body.steps[0].construct
    assert isinstance(wait, WaitFor)
    assert wait.timeout == BusinessTime(timedelta(days=1, hours=4), "support")


@pytest.mark.parametrize(("text", "message"), [
    ("""
     flow: f
     steps:
       - nap:
           wait: { for: { for: 16h, calendar: suport } }
     """, "4:42: unknown calendar 'suport' (did you mean 'support'?)"),
    ("""
     flow: f
     window: deplyo
     steps:
       - nap: { wait: { for: 1h } }
     """, "2:9: unknown calendar 'deplyo' (did you mean 'deploy'?)"),
    ("""
     flow: f
     steps:
       - ship:
           window: night
           log: { message: hi }
     """, "4:15: unknown calendar 'night' (configured: deploy, support)"),
    ("""
     flow: f
     steps:
       - due:
           set: { at: "{{ now() | plus(2d, 'suport') }}" }
     """, "4:18: unknown calendar 'suport' (did you mean 'support'?)"),
    ("""
     flow: f
     steps:
       - nap:
           wait: { for: { for: 16h, calender: support } }
     """, "4:32: unknown key 'calender' in 'for' (did you mean 'calendar'?)"),
    ("""
     flow: f
     steps:
       - nap:
           wait: { for: { calendar: support } }
     """, "4:20: missing 'for' in 'for' (how much business time, such as 16h or 2d)"),
    ("""
     flow: f
     steps:
       - nap:
           wait: { for: { for: 40h, calendar: support } }
     """, "4:27: with a calendar a day is a business day, so '40h' would read as 1d16h "
          "(1 business day, then open time); write open hours under 24h, or business days "
          "such as 5d"),
    ("""
     flow: f
     steps:
       - nap:
           wait: { for: { for: 0s, calendar: support } }
     """, "4:27: 'for' must be a duration longer than 0s"),
    ("""
     flow: f
     steps:
       - call:
           log: { message: hi }
           retry: { max: 2, every: { for: 1h, calendar: support } }
     """, "5:31: 'every' does not wait on a calendar; business time ({for, calendar}) goes on "
          "wait.for, the timeout of wait_for and ask, remind.every and repeat.every"),
])
def test_refusals(text: str, message: str) -> None:
    assert problems(text) == [message]


def test_without_any_calendar_configured_the_message_says_where_to_add_one() -> None:
    assert problems("""
        flow: f
        steps:
          - ship:
              window: deploy
              log: { message: hi }
        """, calendars=()) == [
        "4:15: unknown calendar 'deploy' (none is configured: add a [calendars.deploy] table "
        "to tarry.toml)"]


def test_a_stored_flow_loads_without_the_calendars_checked() -> None:
    flow = load("""
        flow: f
        window: gone
        steps:
          - nap: { wait: { for: { for: 1h, calendar: gone } } }
        """, calendars=None)
    assert flow.window == "gone"

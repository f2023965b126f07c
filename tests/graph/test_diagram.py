"""The drawing's data: what each construct becomes, and the external-wait example's shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph_support import EXAMPLES, load_example
from tarry.graph import Diagram, diagram_of, diagram_of_operations
from tarry.language.loader import parse_flow
from tarry.language.manifests import parse_manifests
from tarry.model import EncodedJSON, JournalEntry, step_node

EVERY_CONSTRUCT = """\
flow: everything
on:
  - schedule: "0 9 * * mon-fri"
    timezone: Europe/Berlin
hold:
  - after: "2030-01-01T09:00:00Z"
steps:
  - hello: { log: { message: hi } }
  - nap: { wait: { for: 2d } }
  - reply:
      wait_for: { any: [ { event: mail.reply, match: { ref: x } },
                         { event: portal.reply, match: { ref: x } } ] }
      accept: "{{ event.ok }}"
      timeout: 1d
      remind: { every: 6h, max: 3, steps: [ { nudge: { log: { message: nudge } } } ] }
  - review:
      ask: { title: Look, outcomes: [accept, reject] }
      timeout: 3d
  - poll:
      repeat: { every: 30s, max: 20, until: "{{ check.done }}" }
      steps:
        - check: { set: { done: true } }
  - each:
      for_each: "{{ [1, 2] }}"
      as: n
      concurrency: 5
      steps:
        - one: { set: { n: "{{ n }}" } }
  - tidy:
      steps:
        - risky: { fail: oops }
      recover:
        - mend: { log: { message: mended } }
  - maybe:
      if: "{{ hello is defined }}"
      optional: true
      exit: early
  - done: { exit: finished }
"""


@pytest.fixture
def everything() -> Diagram:
    manifests = parse_manifests(
        "events:\n  mail.reply: { correlate_on: [ref] }\n  portal.reply: { correlate_on: [ref] }\n",
        "events.yaml")
    return diagram_of(parse_flow(EVERY_CONSTRUCT, "everything.yaml", actions=set(),
                                 manifests=manifests))


def test_each_construct_is_a_node_of_its_kind_with_its_wait(everything: Diagram) -> None:
    kinds = {node.id: (node.kind, node.wait) for node in everything.nodes()}
    assert kinds == {
        "hello": ("action", None), "nap": ("wait", "timer"),
        "reply": ("wait_for", "event"), "reply.remind.nudge": ("action", None),
        "review": ("ask", "task"), "poll": ("repeat", "poll"), "poll.check": ("action", None),
        "each": ("for_each", None), "each.one": ("action", None), "tidy": ("group", None),
        "tidy.risky": ("fail", None), "tidy.mend": ("action", None), "maybe": ("exit", None),
        "done": ("exit", None)}


def test_labels_and_notes_say_what_each_step_waits_for_and_how_it_ends(
        everything: Diagram) -> None:
    nodes = {node.id: node for node in everything.nodes()}
    assert nodes["nap"].label == "timer 2d"
    assert nodes["reply"].label == "first of 2 events"
    assert nodes["reply"].notes == ("any: mail.reply", "or portal.reply", "accept event.ok",
                                    "deadline 1d: goes on with status timeout")
    assert nodes["reply"].regions[0].title == "remind every 6h, at most 3"
    assert nodes["review"].notes == ("outcomes accept, reject",
                                     "deadline 3d: goes on with status timeout")
    assert nodes["poll"].label == "poll every 30s, max 20"
    assert nodes["poll"].notes == ("until check.done", "exhausted: fails repeat-exhausted")
    assert nodes["each"].label == "for each n, 5 at once"
    assert nodes["maybe"].notes == ("if hello is defined", "optional: a failure is a value")
    assert (nodes["maybe"].exit, nodes["maybe"].ends, nodes["maybe"].conditional) == (
        "early", False, True)
    assert (nodes["done"].exit, nodes["done"].ends) == ("finished", True)
    tidy = nodes["tidy"].regions[0]
    assert tidy.recover is not None
    assert [n.id for n in tidy.recover.nodes] == ["tidy.mend"]
    assert everything.start == ("on schedule 0 9 * * mon-fri (Europe/Berlin)",
                                "hold until 2030-01-01T09:00:00.000Z")


@pytest.mark.parametrize(("path", "node"), [
    ("approval", "approval"), ("quotes[3].quote", "quotes.quote"),
    ("a[0].b[12].c", "a.b.c"), ("reply.remind.nudge", "reply.remind.nudge")])
def test_a_runs_step_path_is_at_the_node_without_its_loop_indices(path: str, node: str) -> None:
    assert step_node(path) == node


def test_the_external_wait_showcase_reads_as_reply_reminder_deadline_review_escalation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    flow = load_example(EXAMPLES / "external-wait/flows/reply-review.yaml", monkeypatch)
    top = diagram_of(flow).body.nodes
    assert [(node.step, node.kind, node.wait) for node in top] == [
        ("sent", "action", None), ("reply", "wait_for", "event"), ("validate", "action", None),
        ("received", "exit", None), ("review", "ask", "task"), ("reviewed", "exit", None),
        ("escalate", "action", None), ("escalated", "exit", None)]
    assert top[1].regions[0].kind == "remind"
    assert "deadline 5d: goes on with status timeout" in top[1].notes
    assert [node.exit for node in top if node.exit] == ["received", "received", "escalated"]
    assert top[-1].ends
    assert not top[3].ends


def test_every_example_flow_is_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    for path in sorted(EXAMPLES.glob("*/flows/*.yaml")):
        diagram = diagram_of(load_example(Path(path), monkeypatch))
        assert list(diagram.nodes()), path


def _op(path: str, kind: str) -> JournalEntry:
    return JournalEntry("op", path, EncodedJSON(json.dumps({"in": "", "kind": kind,
                                                            "entry": {}})))


def test_a_python_flow_is_the_operations_its_runs_met_in_the_order_first_met() -> None:
    first = ([_op("reserve", "step"), _op("#1", "now"), _op("fan", "map"),
              _op("fan[0].charge", "step"), _op("fan[1].charge", "step")],
             {"kind": "event", "step": "approval"})
    second = ([_op("reserve", "step"), _op("check", "wait_for_condition")], None)
    diagram = diagram_of_operations("settle", "", [first, second])
    assert [(node.id, node.kind, node.wait) for node in diagram.nodes()] == [
        ("reserve", "action", None), ("fan", "for_each", None), ("fan.charge", "action", None),
        ("approval", "wait_for", "event"), ("check", "repeat", "poll")]
    assert diagram.start == ("Python flow: the operations its runs recorded",)


def test_a_call_is_a_node_waiting_for_a_child_named_after_its_flow() -> None:
    flow = parse_flow("""\
flow: caller
steps:
  - kid:
      call: { flow: onboarding, inputs: { user: u1 } }
  - bounded:
      call: { flow: billing }
      timeout: 2d
""", "caller.yaml")
    kid, bounded = diagram_of(flow).body.nodes
    assert (kid.kind, kid.wait, kid.label, kid.notes) == (
        "call", "child", "child run of onboarding", ("a failed child fails it: child-failed",))
    assert (bounded.label, bounded.notes) == ("child run of billing", (
        "a failed child fails it: child-failed",
        "deadline 2d: goes on with status timeout, the child cancelled"))


def test_a_python_call_is_drawn_from_the_journal_as_a_child_wait() -> None:
    journal = [JournalEntry("op", "#1", {"kind": "call", "child": "c1"})]
    diagram = diagram_of_operations("py", "", [(journal, None)])
    [node] = diagram.body.nodes
    assert (node.kind, node.wait, node.label) == ("call", "child", "child run")
def test_a_window_and_business_time_are_noted_where_they_wait() -> None:
    drawn = diagram_of(parse_flow("""
flow: deploy
window: deploy
steps:
  - nap: { wait: { for: { for: 4h, calendar: support } } }
  - migrate:
      window: deploy
      log: { message: migrating }
""", "deploy.yaml", actions=set(), calendars=("deploy", "support")))
    nodes = {node.id: node for node in drawn.nodes()}
    assert nodes["nap"].label == "timer 4h of support hours"
    assert nodes["migrate"].notes == ("window: starts while calendar deploy is open",)
    assert drawn.start == ("window: starts while calendar deploy is open",)

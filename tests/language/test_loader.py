"""Every refusal of the flow loader, as tables of (bad input, exact message).

Messages are written ``line:column: message`` (the file name ``flow.yaml`` is left out).
Snippets given to :func:`step_problems` are a flow's ``steps:`` list; their first line is
line 3 of the file and their columns are shifted by 2.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from textwrap import dedent, indent

import pytest

from tarry.errors import LoadError
from tarry.language.loader import BUILTIN_ACTIONS, load_flow, parse_flow
from tarry.language.model import (
    Action,
    Backoff,
    Exit,
    Flow,
    ForEach,
    HoldAfter,
    HoldCheck,
    InputSpec,
    Repeat,
    Retry,
    Step,
    Template,
    Wait,
    WaitFor,
)

FILE = "flow.yaml"
ACTIONS = ("slack.post", "probe")


def problems(text: str) -> list[str]:
    """The problems ``text`` is refused for, each as ``line:col: message``."""
    with pytest.raises(LoadError) as caught:
        parse_flow(dedent(text).lstrip("\n"), FILE, actions=ACTIONS)
    return [str(problem).removeprefix(f"{FILE}:") for problem in caught.value.problems]


def with_steps(steps: str, head: str = "flow: f\n") -> str:
    """A flow made of ``head`` and the ``steps:`` list ``steps``."""
    return f"{head}steps:\n{indent(dedent(steps), '  ')}"


def step_problems(steps: str) -> list[str]:
    """The problems of a flow named ``f`` whose steps are ``steps``."""
    return problems(with_steps(steps))


def load(text: str, actions: tuple[str, ...] = ACTIONS) -> Flow:
    """The flow ``text`` loads as."""
    return parse_flow(dedent(text).lstrip("\n"), FILE, actions=actions)


def only_step(steps: str, head: str = "flow: f\n") -> Step:
    """The first step of a flow that loads."""
    return load(with_steps(steps, head)).body.steps[0]


# --- files and YAML -----------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("", ["1:1: the file is empty; a flow needs at least 'flow:' and 'steps:'"]),
    ("# only a comment\n", ["1:1: the file is empty; a flow needs at least 'flow:' and "
                            "'steps:'"]),
    ("- a\n- b\n", ["1:1: a flow file must be a mapping (flow:, steps:, …), got a list"]),
    ("hello\n", ["1:1: a flow file must be a mapping (flow:, steps:, …), got 'hello'"]),
    ("flow: [a\nsteps: 1\n",
     ["2:6: invalid YAML: expected ',' or ']', but got ':' (while parsing a flow sequence)"]),
    ("flow: a: b\n", ["1:8: invalid YAML: mapping values are not allowed here"]),
    ("flow: f\n---\nflow: g\n",
     ["2:1: invalid YAML: but found another document (expected a single document in the "
      "stream)"]),
    ("flow: *nowhere\n", ["1:7: invalid YAML: found undefined alias 'nowhere'"]),
])
def test_unreadable_files(text: str, expected: list[str]) -> None:
    assert problems(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("flow: f\nflow: g\nsteps: [{a: {exit: done}}]\n",
     ["2:1: duplicate key 'flow' (first at line 1)"]),
    ("flow: f\nsteps:\n  - a:\n      log: {message: hi}\n      log: {message: ho}\n",
     ["5:7: duplicate key 'log' (first at line 4)"]),
    ("flow: f\n1: x\nsteps: [{a: {exit: done}}]\n",
     ["2:1: a mapping key must be a string, got 1"]),
    ("flow: f\nsteps: [{a: {log: {<<: {message: hi}}}}]\n",
     ["2:20: merge keys ('<<') are not supported; write the keys out"]),
    ("flow: f\nsteps: [{a: {log: !!binary aGk=}}]\n",
     ["2:19: unsupported YAML tag '!!binary'"]),
    ("flow: f\nsteps: [{a: {log: !custom x}}]\n", ["2:19: unsupported YAML tag '!custom'"]),
    ("flow: f\nsteps: [{a: {log: !!int x}}]\n", ["2:19: 'x' is not a valid !!int"]),
    ("flow: f\nsteps: [{a: {log: !!int ''}}]\n", ["2:19: '' is not a valid !!int"]),
    ("flow: f\nsteps: [{a: {set: {x: &v 1, y: &v 2, z: *v}}}]\n",
     ["2:32: the anchor '&v' is defined twice (first at line 2); give each anchor its own "
      "name"]),
    ("flow: f\nsteps: [{a: {log: &loop [1, *loop]}}]\n",
     ["2:19: an alias refers to a node that contains it (recursive alias)"]),
])
def test_yaml_structure_problems(text: str, expected: list[str]) -> None:
    assert problems(text) == expected


def test_yaml_1_2_words_stay_strings() -> None:
    step = only_step("""
        - a:
            set: {when: on, ok: yes, no: no, date: 2026-09-01}
    """)
    assert step.construct == Action("set", {"when": "on", "ok": "yes", "no": "no",
                                            "date": "2026-09-01"})


def test_a_value_shared_by_an_alias_is_reported_once() -> None:
    assert problems("""
        flow: f
        steps:
          - a: { log: &msg { message: "{{ nope }}" } }
          - b: { log: *msg }
    """) == ["3:31: undefined name 'nope'"]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(LoadError) as caught:
        load_flow(tmp_path / "nope.yaml")
    assert str(caught.value) == f"{tmp_path / 'nope.yaml'}:1:1: file not found"


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(LoadError) as caught:
        load_flow(tmp_path)
    assert str(caught.value) == f"{tmp_path}:1:1: is a directory, not a flow file"


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("flow: café\n".encode("latin-1"))
    with pytest.raises(LoadError) as caught:
        load_flow(path)
    assert str(caught.value) == f"{path}:1:1: the file is not UTF-8 text"


def test_load_flow_reads_the_file_and_keeps_source_digest_and_path(tmp_path: Path) -> None:
    path = tmp_path / "hello.yaml"
    text = "flow: hello\nsteps:\n  - say: { log: { message: hi } }\n"
    path.write_text(text, encoding="utf-8")
    flow = load_flow(path)
    assert (flow.name, flow.source, flow.path) == ("hello", text, str(path))
    assert flow.digest == hashlib.sha256(text.encode()).hexdigest()


def test_every_problem_is_reported_in_position_order() -> None:
    assert problems("""
        flow: Bad Name
        steps:
          - wait_a_bit:
              wait: { for: 2 days }
          - poll:
              repeat: { every: 1s, max: 0, until: "{{ true }}" }
              steps: [{ x: { exit: done } }]
        descripton: typo
    """) == [
        "1:7: 'flow' must be a name matching [a-z0-9][a-z0-9_.-]*, got 'Bad Name'",
        "4:20: '2 days' is not a duration (use e.g. 500ms, 30s, 15m, 24h, 2d, 1w, 1h30m or "
        "ISO 8601 like PT30S)",
        "6:33: 'max' must be a positive integer, got 0",
        "8:1: unknown key 'descripton' at flow level (did you mean 'description'?)",
    ]


def test_builtin_actions() -> None:
    assert frozenset({"log", "set", "fail", "emit", "http.request", "check"}) == BUILTIN_ACTIONS


def test_user_actions_are_unknown_unless_declared() -> None:
    text = with_steps("- ask: { slack.post: { text: hi } }")
    with pytest.raises(LoadError) as caught:
        parse_flow(text, FILE)
    assert [str(p) for p in caught.value.problems] == [
        "flow.yaml:3:12: unknown action or key 'slack.post'"]
    assert parse_flow(text, FILE, actions=["slack.post"]).body.steps[0].construct == Action(
        "slack.post", {"text": "hi"})


# --- the top level ------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("steps: [{a: {exit: done}}]\n", ["1:1: missing 'flow' at flow level (the flow's name)"]),
    ("flow: f\n", ["1:1: missing 'steps' at flow level"]),
    ("flow: Deal_Approval\nsteps: [{a: {exit: done}}]\n",
     ["1:7: 'flow' must be a name matching [a-z0-9][a-z0-9_.-]*, got 'Deal_Approval'"]),
    ("flow:\nsteps: [{a: {exit: done}}]\n",
     ["1:1: 'flow' must be a name matching [a-z0-9][a-z0-9_.-]*, got null"]),
    ("flow: 7\nsteps: [{a: {exit: done}}]\n",
     ["1:7: 'flow' must be a name matching [a-z0-9][a-z0-9_.-]*, got 7"]),
    ("flow: f\nstpes: [{a: {exit: done}}]\n",
     ["2:1: unknown key 'stpes' at flow level (did you mean 'steps'?)"]),
    ("flow: f\nowner: me\nsteps: [{a: {exit: done}}]\n",
     ["2:1: unknown key 'owner' at flow level (expected one of: concurrency, description, flow, "
      "hold, inputs, on, recover, steps, throttle, timezone, window)"]),
    ("flow: f\nholds: [{after: '2026-09-01T09:00:00Z'}]\nsteps: [{a: {exit: done}}]\n",
     ["2:1: unknown key 'holds' at flow level: a flow's start gate is 'hold:'"]),
    ("flow: f\nhold_for: [{check: jira}]\nsteps: [{a: {exit: done}}]\n",
     ["2:1: unknown key 'hold_for' at flow level: a flow's start gate is 'hold:'"]),
    ("flow: f\nwait_for: jira.closed\nsteps: [{a: {exit: done}}]\n",
     ["2:1: unknown key 'wait_for' at flow level: a flow's start gate is 'hold:'"]),
    ("flow: f\ndescription: [a]\nsteps: [{a: {exit: done}}]\n",
     ["2:14: 'description' must be a string, got a list"]),
    ("flow: f\ntimezone: Europe/Berln\nsteps: [{a: {exit: done}}]\n",
     ["2:11: unknown timezone 'Europe/Berln' (did you mean 'Europe/Berlin'?)"]),
    ("flow: f\ntimezone: Mars/Olympus_Mons\nsteps: [{a: {exit: done}}]\n",
     ["2:11: unknown timezone 'Mars/Olympus_Mons' (use an IANA name such as Europe/Berlin)"]),
    ("flow: f\ntimezone: 2\nsteps: [{a: {exit: done}}]\n",
     ["2:11: 'timezone' must be a string, got 2"]),
    ("flow: f\nsteps: []\n", ["2:8: 'steps' must be a non-empty list of steps, got a list"]),
    ("flow: f\nsteps: {a: {exit: done}}\n",
     ["2:8: 'steps' must be a non-empty list of steps, got a mapping"]),
    ("flow: f\nsteps: [{a: {exit: done}}]\nrecover: []\n",
     ["3:10: 'recover' must be a non-empty list of steps, got a list"]),
])
def test_top_level(text: str, expected: list[str]) -> None:
    assert problems(text) == expected


def test_top_level_fields() -> None:
    flow = load("""
        flow: deal.approval-2
        description: Ask for approval.
        timezone: Europe/Berlin
        steps:
          - a: { exit: done }
        recover:
          - tell: { log: { message: "{{ error.message }}" } }
    """)
    assert (flow.name, flow.description, flow.timezone) == ("deal.approval-2",
                                                           "Ask for approval.", "Europe/Berlin")
    assert [step.id for step in flow.body.recover] == ["tell"]


# --- inputs -------------------------------------------------------------------------------

def inputs_problems(inputs: str, head: str = "") -> list[str]:
    """Problems of a flow with ``inputs:`` block ``inputs`` (its first line is line 3)."""
    return problems(f"flow: f\n{head}inputs:\n{indent(dedent(inputs), '  ')}"
                    "steps: [{a: {exit: done}}]\n")


@pytest.mark.parametrize(("inputs", "expected"), [
    ("Deal: {type: object}\n", ["3:3: input 'Deal' must match [a-z_][a-z0-9_]*"]),
    ("run: {type: object}\n",
     ["3:3: input 'run' is a reserved name (env, error, event, item, loop, now, run)"]),
    ("deal: object\n",
     ["3:9: 'deal' must be a mapping such as { type: string, required: true }, got 'object'"]),
    ("deal: {typ: object}\n",
     ["3:10: unknown key 'typ' in input 'deal' (did you mean 'type'?)"]),
    ("deal: {type: int}\n",
     ["3:16: 'type' must be one of string, integer, number, boolean, object, array, instant, "
      "duration, any, got 'int'"]),
    ("deal: {required: yes}\n", ["3:20: 'required' must be true or false, got 'yes'"]),
    ("deal: {required: true, default: {}}\n",
     ["3:26: input 'deal' is required, so it cannot have a default"]),
    ("n: {type: integer, default: '3'}\n",
     ["3:31: the default of input 'n' must be an integer, got '3'"]),
    ("n: {type: integer, default: 2.5}\n",
     ["3:31: the default of input 'n' must be an integer, got 2.5"]),
    ("n: {type: number, default: true}\n",
     ["3:30: the default of input 'n' must be a number, got true"]),
    ("b: {type: boolean, default: yes}\n",
     ["3:31: the default of input 'b' must be true or false, got 'yes'"]),
    ("s: {type: string, default: null}\n",
     ["3:30: the default of input 's' must be a string, got null"]),
    ("at: {type: instant, default: '2026-09-01T09:00:00'}\n",
     ["3:32: the default of input 'at' must be an instant with a zone such as "
      "2026-09-01T09:00:00Z, got '2026-09-01T09:00:00'"]),
    ("d: {type: duration, default: 2 days}\n",
     ["3:32: the default of input 'd' must be a duration such as 30s or 2d, got '2 days'"]),
    ("l: {type: array, default: {}}\n",
     ["3:29: the default of input 'l' must be an array, got a mapping"]),
    ("o: {type: object, default: []}\n",
     ["3:30: the default of input 'o' must be an object, got a list"]),
])
def test_input_declarations(inputs: str, expected: list[str]) -> None:
    assert inputs_problems(inputs) == expected


def test_inputs_must_be_a_mapping() -> None:
    assert problems("flow: f\ninputs: [deal]\nsteps: [{a: {exit: done}}]\n") == [
        "2:9: 'inputs' must be a mapping of name to { type, required, default }, got a list"]


def test_input_specs() -> None:
    flow = load("""
        flow: f
        timezone: Europe/Berlin
        inputs:
          deal: { type: object, required: true }
          note:
          at: { type: instant, default: "2026-09-01T09:00:00" }
          tags: { type: array, default: [a] }
        steps: [{a: {exit: done}}]
    """)
    assert flow.inputs == {
        "deal": InputSpec("deal", "object", required=True),
        "note": InputSpec("note"),
        "at": InputSpec("at", "instant", default="2026-09-01T09:00:00", has_default=True),
        "tags": InputSpec("tags", "array", default=["a"], has_default=True),
    }


# --- hold ---------------------------------------------------------------------------------

def hold_problems(hold: str, head: str = "") -> list[str]:
    """Problems of a flow with ``hold:`` block ``hold`` (its first line is line 3)."""
    return problems(f"flow: f\n{head}hold:\n{indent(dedent(hold), '  ')}"
                    "steps: [{a: {exit: done}}]\n")


@pytest.mark.parametrize(("hold", "expected"), [
    ("- after: '2026-09-01T09:00:00'\n",
     ["3:12: instant '2026-09-01T09:00:00' has no timezone; add 'Z' or an offset such as "
      "+02:00, or declare the flow's 'timezone'"]),
    ("- after: 2026-09-01T09:00:00\n",
     ["3:12: instant '2026-09-01T09:00:00' has no timezone; add 'Z' or an offset such as "
      "+02:00, or declare the flow's 'timezone'"]),
    ("- after: '2026-02-31T09:00:00Z'\n",
     ["3:12: '2026-02-31T09:00:00Z' is not a real date and time (day is out of range for "
      "month)"]),
    ("- after: '2026-09-01T24:00:00Z'\n",
     ["3:12: '2026-09-01T24:00:00Z' is not a real date and time (hour must be in 0..23)"]),
    ("- after: '2026-09-01T09:00:00+25:00'\n",
     ["3:12: '2026-09-01T09:00:00+25:00' has an impossible UTC offset '+25:00'"]),
    ("- after: '2026-09-01T09:00:00+02:60'\n",
     ["3:12: '2026-09-01T09:00:00+02:60' has an impossible UTC offset '+02:60'"]),
    ("- after: next monday\n",
     ["3:12: 'next monday' is not an ISO 8601 instant (e.g. 2026-09-01T09:00:00Z)"]),
    ("- after: 5\n", ["3:12: 'after' must be an instant such as 2026-09-01T09:00:00Z, got 5"]),
    ("- after: '2026-09-01T09:00:00Z'\n- after: '2026-09-02T09:00:00Z'\n",
     ["4:5: a hold has at most one 'after' (first at line 3)"]),
    ("- check: jira\n- check: ci\n- check: jira\n",
     ["5:5: check 'jira' appears twice in 'hold' (first at line 3)"]),
    ("- check: ''\n",
     ["3:12: 'check' must be the name of a check declared in the project config, got ''"]),
    ("- check: '{{ name }}'\n",
     ["3:12: 'check' must be the name of a check declared in the project config, "
      "got '{{ name }}'"]),
    ("- chek: jira\n",
     ["3:5: unknown key 'chek' in a hold condition (did you mean 'check'?)"]),
    ("- profile: slow\n",
     ["3:5: unknown key 'profile' in a hold condition (expected one of: after, check)"]),
    ("- after: '2026-09-01T09:00:00Z'\n  check: jira\n",
     ["3:5: a hold condition has exactly one key, 'after' or 'check'; this one has 2 "
      "('after', 'check')"]),
    ("- jira\n", ["3:5: a hold condition is '- after: <instant>' or '- check: <name>', "
                  "got 'jira'"]),
    ("- {}\n", ["3:5: a hold condition is '- after: <instant>' or '- check: <name>', "
                "got a mapping"]),
    ("[]\n", ["3:3: 'hold' needs at least one condition"]),
    ("check: jira\n", ["3:3: 'hold' must be a list of 1 to 4 conditions, each '- after: "
                       "<instant>' or '- check: <name>', got a mapping"]),
    ("- check: a\n- check: b\n- check: c\n- check: d\n- check: e\n",
     ["7:5: 'hold' has 5 conditions; at most 4 are allowed"]),
])
def test_hold_refusals(hold: str, expected: list[str]) -> None:
    assert hold_problems(hold) == expected


def test_hold_after_skipped_by_the_clocks_in_the_flow_timezone() -> None:
    assert hold_problems("- after: '2026-03-29T02:30:00'\n",
                         head="timezone: Europe/Berlin\n") == [
        "4:12: '2026-03-29T02:30:00' does not exist in Europe/Berlin (the clocks skip that "
        "time)"]


def test_hold_conditions() -> None:
    flow = load("""
        flow: f
        timezone: Europe/Berlin
        hold:
          - after: "2026-09-01T09:00:00"
          - check: jira
          - check: ci
        steps: [{a: {exit: done}}]
    """)
    assert [type(c) for c in flow.hold] == [HoldAfter, HoldCheck, HoldCheck]
    assert flow.hold[0] == HoldAfter(datetime(2026, 9, 1, 7, tzinfo=UTC), flow.hold[0].pos)
    assert [c.name for c in flow.hold[1:] if isinstance(c, HoldCheck)] == ["jira", "ci"]
    assert (flow.hold[1].pos.line, flow.hold[1].pos.column) == (5, 5)


# --- step lists and ids -------------------------------------------------------------------

@pytest.mark.parametrize(("steps", "expected"), [
    ("- ask\n", ["3:5: a step is written '- <id>: <body>', got 'ask'"]),
    ("- ask:\n  slack.post: {text: hi}\n",
     ["3:5: a step is written '- <id>: <body>', got 2 keys ('ask', 'slack.post'); indent the "
      "body under the id"]),
    ("- ask:\n", ["3:5: step 'ask' has an empty body"]),
    ("- ask: log\n",
     ["3:10: step 'ask' must be a mapping of one construct plus modifiers, got 'log'"]),
    ("- Ask: {exit: done}\n", ["3:5: step id 'Ask' must match [a-z_][a-z0-9_]*"]),
    ("- ask-me: {exit: done}\n", ["3:5: step id 'ask-me' must match [a-z_][a-z0-9_]*"]),
    ("- 1st: {exit: done}\n", ["3:5: step id '1st' must match [a-z_][a-z0-9_]*"]),
    ("- event: {exit: done}\n",
     ["3:5: step id 'event' is a reserved name (env, error, event, item, loop, now, run)"]),
    ("- item: {exit: done}\n",
     ["3:5: step id 'item' is a reserved name (env, error, event, item, loop, now, run)"]),
    ("- a: {log: {message: x}}\n- a: {exit: done}\n",
     ["4:5: duplicate step id 'a' in this scope (first at line 3)"]),
    ("- g:\n    steps: [{a: {exit: done}}]\n    recover: [{a: {exit: failed}}]\n",
     ["5:18: duplicate step id 'a' in this scope (first at line 4)"]),
])
def test_step_lists(steps: str, expected: list[str]) -> None:
    assert step_problems(steps) == expected


def test_step_id_may_not_shadow_an_input() -> None:
    assert problems("""
        flow: f
        inputs: { deal: {} }
        steps: [{deal: {exit: done}}]
    """) == ["3:10: step id 'deal' shadows the input 'deal'"]


def test_flow_steps_and_recover_share_one_scope() -> None:
    assert problems("""
        flow: f
        steps: [{a: {exit: done}}]
        recover: [{a: {exit: failed}}]
    """) == ["3:12: duplicate step id 'a' in this scope (first at line 2)"]


def test_a_nested_scope_may_reuse_an_outer_id() -> None:
    step = only_step("""
        - a:
            steps:
              - a: { exit: done }
    """)
    assert step.construct.steps.steps[0].id == "a"


# --- step bodies: constructs, companions, modifiers ---------------------------------------

@pytest.mark.parametrize(("steps", "expected"), [
    ("- a: {optional: true}\n",
     ["3:8: step 'a' has no construct: add an action or one of wait, wait_for, ask, call, "
      "repeat, for_each, steps, exit, fail"]),
    ("- a: {wiat: {for: 1s}}\n", ["3:9: unknown action or key 'wiat' (did you mean 'wait'?)"]),
    ("- a: {wait_fro: x, timeout: 1h}\n",
     ["3:9: unknown action or key 'wait_fro' (did you mean 'wait_for'?)"]),
    ("- a: {lgo: {message: hi}}\n", ["3:9: unknown action or key 'lgo' (did you mean 'log'?)"]),
    ("- a: {wait: {for: 1s}, log: {message: hi}}\n",
     ["3:8: step 'a' has 2 constructs ('wait', 'log'); a step holds exactly one"]),
    ("- a: {exit: done, fail: boom}\n",
     ["3:8: step 'a' has 2 constructs ('exit', 'fail'); a step holds exactly one"]),
    ("- a: {wait: {for: 1s}, steps: [{b: {exit: done}}]}\n",
     ["3:8: step 'a' has 2 constructs ('wait', 'steps'); a step holds exactly one"]),
    ("- a: {log: {message: hi}, optinal: true}\n",
     ["3:29: unknown action or key 'optinal' (did you mean 'optional'?)"]),
    ("- a: {wait_for: x, timeout: 1h, timout: 2h}\n",
     ["3:35: unknown action or key 'timout' (did you mean 'timeout'?)"]),
    ("- a: {wait: {for: 1s}, match: {k: v}}\n",
     ["3:26: 'match' is only allowed with 'wait_for'"]),
    ("- a: {log: {message: hi}, recover: [{b: {exit: done}}]}\n",
     ["3:29: 'recover' is only allowed with 'repeat', 'for_each' or 'steps'"]),
    ("- a: {exit: done, as: vendor}\n", ["3:21: 'as' is only allowed with 'for_each'"]),
    ("- a: {wait: {for: 1s}, retry: {max: 2, every: 1s}}\n",
     ["3:26: 'retry' is only allowed on action steps"]),
    ("- a: {log: {message: hi}, if: x == 1}\n",
     ["3:33: 'if' must be one {{ … }} expression or true/false, got 'x == 1'"]),
    ("- a: {log: {message: hi}, if: yes}\n",
     ["3:33: 'if' must be one {{ … }} expression or true/false, got 'yes'"]),
    ("- a: {log: {message: hi}, if: '{{ true }} and {{ false }}'}\n",
     ["3:33: 'if' must be one {{ … }} expression or true/false, got '{{ true }} and "
      "{{ false }}'"]),
    ("- a: {log: {message: hi}, optional: 'true'}\n",
     ["3:39: 'optional' must be true or false, got 'true'"]),
    ("- a: {log: {message: hi}, retry: 3}\n",
     ["3:36: 'retry' must be a mapping such as { max: 3, every: 10s }, got 3"]),
    ("- a: {log: {message: hi}, retry: {every: 1s}}\n", ["3:36: missing 'max' in 'retry'"]),
    ("- a: {log: {message: hi}, retry: {max: 3}}\n", ["3:36: missing 'every' in 'retry'"]),
    ("- a: {log: {message: hi}, retry: {max: 0, every: 1s}}\n",
     ["3:42: 'max' must be a positive integer, got 0"]),
    ("- a: {log: {message: hi}, retry: {max: 2, every: 1s, backoff: 0.5}}\n",
     ["3:65: 'backoff' must be a number of at least 1, got 0.5"]),
    ("- a: {log: {message: hi}, retry: {max: 2, every: 1s, jitter: full}}\n",
     ["3:56: unknown key 'jitter' in 'retry' (expected one of: backoff, every, max)"]),
    ("- a: {log: {message: hi}, timeout: 0s}\n",
     ["3:38: 'timeout' must be a duration longer than 0s, got '0s'"]),
    ("- a: {log: {message: hi}, timeout: soon}\n",
     ["3:38: 'soon' is not a duration (use e.g. 500ms, 30s, 15m, 24h, 2d, 1w, 1h30m or "
      "ISO 8601 like PT30S)"]),
    ("- a: {log: {message: hi}, timeout: 5}\n",
     ["3:38: 'timeout' must be a duration such as 30s or 2d, got 5"]),
    ("- a: {log: {message: hi}, timeout: 1mo}\n",
     ["3:38: duration '1mo' uses months or years, whose length is ambiguous; use days or "
      "weeks"]),
    ("- a: {log: {message: hi}, timeout: '{{ inputs.t }}'}\n",
     ["3:38: an action's 'timeout' must be a literal duration such as 30s or 5m, not an "
      "expression"]),
    ("- a: {wait: {for: 1s}, timeout: 1h}\n",
     ["3:26: 'timeout' is only allowed with 'wait_for', 'ask', 'call' or an action"]),
    ("- a: {exit: done, timeout: 1h}\n",
     ["3:21: 'timeout' is only allowed with 'wait_for', 'ask', 'call' or an action"]),
    ("- a: {log: {message: hi}, timout: 1h}\n",
     ["3:29: unknown action or key 'timout' (did you mean 'timeout'?)"]),
])
def test_step_bodies(steps: str, expected: list[str]) -> None:
    assert step_problems(steps) == expected


def test_modifiers() -> None:
    step = only_step("""
        - a:
            probe: { id: 1 }
            if: "{{ true }}"
            optional: true
            retry: { max: 3, every: 10s, backoff: 2 }
    """)
    assert step.construct == Action("probe", {"id": 1})
    assert (step.if_, step.optional, step.retry) == (
        Template("{{ true }}"), True, Retry(3, timedelta(seconds=10), 2.0))
    assert only_step("- a: {exit: done, if: false}").if_ is False


def test_an_action_step_takes_a_timeout() -> None:
    assert only_step("- a: {probe: {id: 1}, timeout: 1m30s}").construct == Action(
        "probe", {"id": 1}, timedelta(seconds=90))
    assert only_step("- a: {probe: {id: 1}}").construct.timeout is None  # type: ignore[union-attr]


# --- wait ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("steps", "expected"), [
    ("- a: {wait: 2d}\n", ["3:15: 'wait' must be a mapping such as { for: 2d }, got '2d'"]),
    ("- a: {wait: {}}\n", ["3:15: 'wait' needs exactly one of 'for' and 'until'"]),
    ("- a: {wait: {for: 1s, until: '2026-09-01T09:00:00Z'}}\n",
     ["3:15: 'wait' needs exactly one of 'for' and 'until'"]),
    ("- a: {wait: {fro: 1s}}\n",
     ["3:15: 'wait' needs exactly one of 'for' and 'until'",
      "3:16: unknown key 'fro' in 'wait' (did you mean 'for'?)"]),
    ("- a: {wait: {for: 30}}\n", ["3:21: 'for' must be a duration such as 30s or 2d, got 30"]),
    ("- a: {wait: {for: 1mo}}\n",
     ["3:21: duration '1mo' uses months or years, whose length is ambiguous; use days or "
      "weeks"]),
    ("- a: {wait: {for: P1Y}}\n",
     ["3:21: duration 'P1Y' uses months or years, whose length is ambiguous; use days or "
      "weeks"]),
    ("- a: {wait: {until: '2026-09-01 09:00'}}\n",
     ["3:23: instant '2026-09-01 09:00' has no timezone; add 'Z' or an offset such as +02:00, "
      "or declare the flow's 'timezone'"]),
    ("- a: {wait: {until: 2026-02-31T00:00:00Z}}\n",
     ["3:23: '2026-02-31T00:00:00Z' is not a real date and time (day is out of range for "
      "month)"]),
    ("- a: {wait: {until: '{{ nope }}'}}\n", ["3:23: undefined name 'nope'"]),
])
def test_wait_refusals(steps: str, expected: list[str]) -> None:
    assert step_problems(steps) == expected


@pytest.mark.parametrize(("body", "expected"), [
    ("{for: 2d}", Wait(for_=timedelta(days=2))),
    ("{for: 0s}", Wait(for_=timedelta(0))),
    ("{for: PT1H30M}", Wait(for_=timedelta(hours=1, minutes=30))),
    ("{for: '{{ 1d }}'}", Wait(for_=Template("{{ 1d }}"))),
    ("{until: '2026-09-01T09:00:00+02:00'}", Wait(until=datetime(2026, 9, 1, 7, tzinfo=UTC))),
    ("{until: '{{ now() | plus(1h) }}'}", Wait(until=Template("{{ now() | plus(1h) }}"))),
])
def test_wait(body: str, expected: Wait) -> None:
    assert only_step(f"- a: {{wait: {body}}}").construct == expected


def test_zone_less_wait_until_is_read_in_the_flow_timezone() -> None:
    step = only_step("- a: {wait: {until: '2026-01-15T09:00:00'}}",
                     head="flow: f\ntimezone: Europe/Berlin\n")
    assert step.construct == Wait(until=datetime(2026, 1, 15, 8, tzinfo=UTC))


# --- wait_for -----------------------------------------------------------------------------

@pytest.mark.parametrize(("steps", "expected"), [
    ("- a: {wait_for: x}\n",
     ["3:8: missing 'timeout' in step 'a' (every wait_for is bounded: a duration, an instant "
      "or an expression)"]),
    ("- a: {wait_for: x, timeout: tomorrow}\n",
     ["3:31: 'timeout' must be a duration such as 24h, an instant such as "
      "2026-09-01T09:00:00Z, or an expression, got 'tomorrow'"]),
    ("- a: {wait_for: x, timeout: 24}\n",
     ["3:31: 'timeout' must be a duration such as 24h, an instant such as "
      "2026-09-01T09:00:00Z, or an expression, got 24"]),
    ("- a: {wait_for: x, timeout: '2026-09-01T09:00'}\n",
     ["3:31: instant '2026-09-01T09:00' has no timezone; add 'Z' or an offset such as "
      "+02:00, or declare the flow's 'timezone'"]),
    ("- a: {wait_for: x, timeout: 2y}\n",
     ["3:31: 'timeout' must be a duration such as 24h, an instant such as "
      "2026-09-01T09:00:00Z, or an expression, got '2y'"]),
    ("- a: {wait_for: Slack Approval, timeout: 1h}\n",
     ["3:19: 'wait_for' must be a name matching [a-z0-9][a-z0-9_.-]*, got 'Slack Approval'"]),
    ("- a: {wait_for: '{{ kind }}', timeout: 1h}\n",
     ["3:19: 'wait_for' must be a name matching [a-z0-9][a-z0-9_.-]*, got '{{ kind }}'"]),
    ("- a: {wait_for: [x, y], timeout: 1h}\n",
     ["3:19: 'wait_for' must be a name matching [a-z0-9][a-z0-9_.-]*, got a list"]),
    ("- a: {wait_for: x, timeout: 1h, match: ts}\n",
     ["3:42: 'match' must be a mapping of correlation key to value, got 'ts'"]),
    ("- a: {wait_for: x, timeout: 1h, match: {ts: [1, 2]}}\n",
     ["3:47: match value 'ts' must be a string, number, boolean or expression, got a list"]),
    ("- a: {wait_for: x, timeout: 1h, match: {ts: '{{ ask.ts }}'}}\n",
     ["3:47: undefined name 'ask'"]),
    ("- a: {wait_for: x, timeout: 1h, accept: '{{ event.ok }} !'}\n",
     ["3:43: 'accept' must be one {{ … }} expression, such as \"{{ check.status == 'done' }}"
      "\", got '{{ event.ok }} !'"]),
    ("- a: {wait_for: x, timeout: 1h, accept: true}\n",
     ["3:43: 'accept' must be one {{ … }} expression, such as \"{{ check.status == 'done' }}"
      "\", got true"]),
    ("- a: {wait_for: {any: [{event: x}]}, timeout: 1h}\n",
     ["3:25: 'any' must be a list of at least 2 alternatives ({event, match}), got 1"]),
    ("- a: {wait_for: {any: x}, timeout: 1h}\n",
     ["3:25: 'any' must be a list of at least 2 alternatives ({event, match}), got 'x'"]),
    ("- a: {wait_for: {}, timeout: 1h}\n", ["3:19: missing 'any' in 'wait_for'"]),
    ("- a: {wait_for: {one: [x, y]}, timeout: 1h}\n",
     ["3:19: missing 'any' in 'wait_for'",
      "3:20: unknown key 'one' in 'wait_for' (expected one of: any)"]),
    ("- a: {wait_for: {any: [{event: x}, {type: y}]}, timeout: 1h}\n",
     ["3:38: missing 'event' in an 'any' alternative",
      "3:39: unknown key 'type' in an 'any' alternative (expected one of: event, match)"]),
    ("- a: {wait_for: {any: [{event: x}, y]}, timeout: 1h}\n",
     ["3:38: 'alternative' must be a mapping such as { event: email.reply, match: … }, "
      "got 'y'"]),
    ("- a: {wait_for: {any: [{event: x}, {event: y}]}, timeout: 1h, match: {k: v}}\n",
     ["3:65: with 'wait_for: { any: … }' each alternative has its own 'match'; remove the "
      "step's 'match'"]),
    ("- a: {wait_for: x, timeout: 1h, remind: 6h}\n",
     ["3:43: 'remind' must be a mapping such as { every: 6h, steps: [...] }, got '6h'"]),
    ("- a: {wait_for: x, timeout: 1h, remind: {every: 6h}}\n",
     ["3:43: missing 'steps' in 'remind'"]),
    ("- a: {wait_for: x, timeout: 1h, remind: {steps: [{n: {exit: done}}]}}\n",
     ["3:43: missing 'every' in 'remind'"]),
    ("- a: {wait_for: x, timeout: 1h, remind: {every: 0s, steps: [{n: {exit: done}}]}}\n",
     ["3:51: 'every' must be a duration longer than 0s, got '0s'"]),
    ("- a: {wait_for: x, timeout: 1h, remind: {every: 1h, max: 0, steps: [{n: {exit: d}}]}}\n",
     ["3:60: 'max' must be a positive integer, got 0"]),
    ("- a: {wait_for: x, timeout: 1h, remind: {evry: 1h, steps: [{n: {exit: d}}]}}\n",
     ["3:44: unknown key 'evry' in 'remind' (did you mean 'every'?)"]),
])
def test_wait_for_refusals(steps: str, expected: list[str]) -> None:
    assert step_problems(steps) == expected


def test_wait_for_plain() -> None:
    flow = load(with_steps("""
        - ask: { slack.post: { text: hi } }
        - approval:
            wait_for: slack.approval
            match: { message: "{{ ask.ts }}", n: 3 }
            timeout: "2026-09-01T09:00:00Z"
            accept: "{{ event.approved is defined }}"
    """))
    wait_for = flow.body.steps[1].construct
    assert isinstance(wait_for, WaitFor)
    assert [(alt.event, alt.match) for alt in wait_for.alternatives] == [
        ("slack.approval", {"message": "{{ ask.ts }}", "n": 3})]
    assert (wait_for.is_any, wait_for.remind) == (False, None)
    assert wait_for.timeout == datetime(2026, 9, 1, 9, tzinfo=UTC)
    assert wait_for.accept == Template("{{ event.approved is defined }}")


def test_wait_for_any_with_remind() -> None:
    flow = load(with_steps("""
        - ask: { slack.post: { text: hi } }
        - reply:
            wait_for:
              any:
                - { event: email.reply, match: { thread: "{{ ask.ts }}" } }
                - { event: portal.reply }
            timeout: "{{ 2d }}"
            remind:
              every: 6h
              max: 3
              steps:
                - nudge: { slack.post: { text: "still waiting on {{ ask.ts }}" } }
    """))
    wait_for = flow.body.steps[1].construct
    assert isinstance(wait_for, WaitFor)
    assert wait_for.is_any
    assert [(alt.event, alt.match) for alt in wait_for.alternatives] == [
        ("email.reply", {"thread": "{{ ask.ts }}"}), ("portal.reply", {})]
    assert wait_for.timeout == Template("{{ 2d }}")
    assert wait_for.remind is not None
    assert (wait_for.remind.every, wait_for.remind.max) == (timedelta(hours=6), 3)
    assert wait_for.remind.steps.steps[0].construct == Action(
        "slack.post", {"text": "still waiting on {{ ask.ts }}"})


# --- repeat -------------------------------------------------------------------------------

REPEAT_STEPS = "steps: [{check: {probe: {}}}]"


@pytest.mark.parametrize(("repeat", "expected"), [
    ("{every: 1s, until: '{{ true }}'}",
     ["3:20: missing 'max' in 'repeat' (a repeat is always bounded)"]),
    ("{every: 1s, max: 0, until: '{{ true }}'}", ["3:37: 'max' must be a positive integer, "
                                                  "got 0"]),
    ("{every: 1s, max: -1, until: '{{ true }}'}", ["3:37: 'max' must be a positive integer, "
                                                   "got -1"]),
    ("{every: 1s, max: 2.5, until: '{{ true }}'}", ["3:37: 'max' must be a positive integer, "
                                                    "got 2.5"]),
    ("{every: 1s, max: '3', until: '{{ true }}'}", ["3:37: 'max' must be a positive integer, "
                                                    "got '3'"]),
    ("{every: 1s, max: true, until: '{{ true }}'}",
     ["3:37: 'max' must be a positive integer, got true"]),
    ("{every: 1s, max: 3}",
     ["3:20: missing 'until' in 'repeat' (the condition that ends the polling)"]),
    ("{every: 1s, max: 3, until: 'check.done'}",
     ["3:47: 'until' must be one {{ … }} expression, such as \"{{ check.status == 'done' }}\""
      ", got 'check.done'"]),
    ("{max: 3, until: '{{ true }}'}", ["3:20: 'repeat' needs exactly one of 'every' and "
                                       "'backoff'"]),
    ("{every: 1s, backoff: {initial: 1s, max_delay: 1m}, max: 3, until: '{{ true }}'}",
     ["3:20: 'repeat' needs exactly one of 'every' and 'backoff'"]),
    ("{every: soon, max: 3, until: '{{ true }}'}",
     ["3:28: 'soon' is not a duration (use e.g. 500ms, 30s, 15m, 24h, 2d, 1w, 1h30m or ISO "
      "8601 like PT30S)"]),
    ("{interval: 1s, max: 3, until: '{{ true }}'}",
     ["3:20: 'repeat' needs exactly one of 'every' and 'backoff'",
      "3:21: unknown key 'interval' in 'repeat' (expected one of: backoff, every, max, "
      "until)"]),
    ("{backoff: 5s, max: 3, until: '{{ true }}'}",
     ["3:30: 'backoff' must be a mapping such as { initial: 5s, max_delay: 5m }, got '5s'"]),
    ("{backoff: {max_delay: 1m}, max: 3, until: '{{ true }}'}",
     ["3:30: missing 'initial' in 'backoff'"]),
    ("{backoff: {initial: 1m, max_delay: 1s}, max: 3, until: '{{ true }}'}",
     ["3:30: 'max_delay' in 'backoff' must not be shorter than 'initial'"]),
    ("{backoff: {initial: 1s, max_delay: 1m, rate: 0.5}, max: 3, until: '{{ true }}'}",
     ["3:65: 'rate' must be a number of at least 1, got 0.5"]),
    ("{backoff: {initial: 1s, max_delay: 1m, jitter: some}, max: 3, until: '{{ true }}'}",
     ["3:67: 'jitter' must be one of none, full, half, got 'some'"]),
    ("20", ["3:20: 'repeat' must be a mapping such as { every: 30s, max: 20, until: "
            "\"{{ … }}\" }, got 20"]),
])
def test_repeat_refusals(repeat: str, expected: list[str]) -> None:
    assert step_problems(f"- poll: {{repeat: {repeat}, {REPEAT_STEPS}}}\n") == expected


def test_repeat_needs_steps() -> None:
    assert step_problems("- poll: {repeat: {every: 1s, max: 2, until: '{{ true }}'}}\n") == [
        "3:11: missing 'steps' in step 'poll'"]


def test_repeat() -> None:
    step = only_step("""
        - indexed:
            repeat: { every: 30s, max: 20, until: "{{ check.status == 'indexed' }}" }
            steps:
              - check: { probe: { id: "{{ loop.index }}" } }
    """)
    assert step.construct == Repeat(
        max=20, every=timedelta(seconds=30),
        until=Template("{{ check.status == 'indexed' }}"),
        steps=step.construct.steps)
    assert step.construct.steps.steps[0].construct == Action("probe", {"id": "{{ loop.index }}"})


def test_repeat_with_backoff_defaults() -> None:
    step = only_step("""
        - poll:
            repeat: { backoff: { initial: 5s, max_delay: 5m }, max: 5, until: "{{ true }}" }
            steps: [{ x: { probe: {} } }]
    """)
    assert step.construct.backoff == Backoff(timedelta(seconds=5), timedelta(minutes=5))
    full = only_step("""
        - poll:
            repeat:
              backoff: { initial: 1s, max_delay: 1m, rate: 1.5, jitter: full }
              max: 5
              until: "{{ true }}"
            steps: [{ x: { probe: {} } }]
    """)
    assert full.construct.backoff == Backoff(timedelta(seconds=1), timedelta(minutes=1), 1.5,
                                             "full")


# --- for_each -----------------------------------------------------------------------------

@pytest.mark.parametrize(("steps", "expected"), [
    ("- r: {for_each: vendors, steps: [{x: {probe: {}}}]}\n",
     ["3:19: 'for_each' must be a list or an expression giving one, such as "
      "\"{{ vendors }}\", got 'vendors'"]),
    ("- r: {for_each: {a: 1}, steps: [{x: {probe: {}}}]}\n",
     ["3:19: 'for_each' must be a list or an expression giving one, such as "
      "\"{{ vendors }}\", got a mapping"]),
    ("- r: {for_each: [1], as: loop, steps: [{x: {probe: {}}}]}\n",
     ["3:28: the 'as' name 'loop' is a reserved name (env, error, event, item, loop, now, "
      "run)"]),
    ("- r: {for_each: [1], as: Vendor, steps: [{x: {probe: {}}}]}\n",
     ["3:28: the 'as' name 'Vendor' must match [a-z_][a-z0-9_]*"]),
    ("- r: {for_each: [1], as: 3, steps: [{x: {probe: {}}}]}\n",
     ["3:28: 'as' must be a name, got 3"]),
    ("- r: {for_each: [1], as: v, steps: [{v: {probe: {}}}]}\n",
     ["3:40: step id 'v' shadows the for_each name 'v'"]),
    ("- r: {for_each: [1], concurrency: 0, steps: [{x: {probe: {}}}]}\n",
     ["3:37: 'concurrency' must be a positive integer, got 0"]),
    ("- r: {for_each: [1], tolerate: -1, steps: [{x: {probe: {}}}]}\n",
     ["3:34: 'tolerate' must be a non-negative integer, got -1"]),
    ("- r: {for_each: [1]}\n", ["3:8: missing 'steps' in step 'r'"]),
    ("- r: {for_each: [1], steps: []}\n",
     ["3:31: 'steps' must be a non-empty list of steps, got a list"]),
])
def test_for_each_refusals(steps: str, expected: list[str]) -> None:
    assert step_problems(steps) == expected


def test_for_each_name_may_not_shadow_an_input() -> None:
    assert problems("""
        flow: f
        inputs: { vendor: {} }
        steps: [{r: {for_each: [1], as: vendor, steps: [{x: {probe: {}}}]}}]
    """) == ["3:33: the 'as' name 'vendor' shadows the input 'vendor'"]


def test_for_each() -> None:
    flow = load("""
        flow: f
        inputs: { vendors: { type: array } }
        steps:
          - replies:
              for_each: "{{ vendors }}"
              as: vendor
              concurrency: 50
              tolerate: 2
              steps:
                - ask: { probe: { to: "{{ vendor.email }}", n: "{{ loop.index }}" } }
          - literal:
              for_each: [a, b]
              as: item
              steps: [{ say: { log: { message: "{{ item }}" } } }]
    """)
    replies, literal = flow.body.steps
    assert replies.construct == ForEach(items="{{ vendors }}", steps=replies.construct.steps,
                                        as_="vendor", concurrency=50, tolerate=2)
    assert literal.construct == ForEach(items=["a", "b"], steps=literal.construct.steps)


# --- groups, exit, fail -------------------------------------------------------------------

@pytest.mark.parametrize(("steps", "expected"), [
    ("- g: {steps: x}\n", ["3:16: 'steps' must be a non-empty list of steps, got 'x'"]),
    ("- g: {steps: [{a: {exit: done}}], recover: x}\n",
     ["3:46: 'recover' must be a non-empty list of steps, got 'x'"]),
    ("- e: {exit: No Answer}\n",
     ["3:15: 'exit' must be a name matching [a-z0-9][a-z0-9_.-]*, got 'No Answer'"]),
    ("- e: {exit: '{{ why }}'}\n",
     ["3:15: 'exit' must be a name matching [a-z0-9][a-z0-9_.-]*, got '{{ why }}'"]),
    ("- e: {fail: {message: boom}}\n", ["3:15: 'fail' must be a string, got a mapping"]),
    ("- e: {fail: 'no {{ reason }}'}\n", ["3:15: undefined name 'reason'"]),
])
def test_group_exit_fail_refusals(steps: str, expected: list[str]) -> None:
    assert step_problems(steps) == expected


def test_exit_and_fail() -> None:
    flow = load(with_steps("""
        - a: { exit: no-answer }
        - b: { fail: "gave up after {{ run.id }}" }
    """))
    assert flow.body.steps[0].construct == Exit("no-answer")
    assert flow.body.steps[1].construct.message == "gave up after {{ run.id }}"


# --- expressions and the names they may use -----------------------------------------------

@pytest.mark.parametrize(("steps", "expected"), [
    ("- a: {log: {message: '{{ 1 + }}'}}\n",
     ["3:24: invalid expression: syntax error at position 7: the expression ends too early"]),
    ("- a: {log: {message: 'hi {{ name'}}\n",
     ["3:24: invalid expression: '{{' at position 4 is not closed by '}}'"]),
    ("- a: {log: {message: '{{ x | nosuch }}'}}\n",
     ["3:24: invalid expression: unknown filter 'nosuch'"]),
    ("- a: {exit: done, if: '{{ 1 + }}'}\n",
     ["3:25: invalid expression: syntax error at position 7: the expression ends too early"]),
    ("- a: {log: {message: '{{ dael.name }}'}}\n", ["3:24: undefined name 'dael'"]),
    ("- a: {log: {message: '{{ event.ok }}'}}\n",
     ["3:24: undefined name 'event' ('event' is only defined in 'accept')"]),
    ("- a: {log: {message: '{{ item }}'}}\n",
     ["3:24: undefined name 'item' ('item' is only defined inside for_each)"]),
    ("- a: {log: {message: '{{ loop.index }}'}}\n",
     ["3:24: undefined name 'loop' ('loop' is only defined inside repeat and for_each)"]),
    ("- a: {log: {message: '{{ error.message }}'}}\n",
     ["3:24: undefined name 'error' ('error' is only defined in recover steps)"]),
    ("- a: {log: {message: '{{ b.x }}'}}\n- b: {probe: {}}\n", ["3:24: undefined name 'b'"]),
    ("- a: {probe: {}, if: '{{ a.ok }}'}\n", ["3:24: undefined name 'a'"]),
    ("- ask: {probe: {}}\n- b: {log: {message: '{{ aks.ts }}'}}\n",
     ["4:24: undefined name 'aks' (did you mean 'ask'?)"]),
    ("- g: {steps: [{inner: {probe: {}}}]}\n- b: {log: {message: '{{ inner }}'}}\n",
     ["4:24: undefined name 'inner'"]),
    ("- r:\n    repeat: {every: 1s, max: 2, until: '{{ r }}'}\n    steps: [{x: {probe: {}}}]\n",
     ["4:42: undefined name 'r'"]),
    ("- a: {log: {message: '{{ now }}'}}\n",
     ["3:24: undefined name 'now' (now is a function: write now())"]),
    ("- a: {log: {message: '{{ env.HOME }}'}}\n", ["3:24: undefined name 'env'"]),
    ("- ok: {exit: done, if: '{{ a and b }}'}\n",
     ["3:26: undefined name 'a'", "3:26: undefined name 'b'"]),
])
def test_expression_refusals(steps: str, expected: list[str]) -> None:
    assert step_problems(steps) == expected


def test_names_visible_where_the_language_binds_them() -> None:
    flow = load("""
        flow: f
        inputs: { deal: {} }
        steps:
          - ask: { probe: { text: "{{ deal.name }} {{ run.id }} {{ now() }}" } }
          - poll:
              repeat: { every: 1s, max: 3, until: "{{ check.ok and loop.index > 0 }}" }
              steps:
                - check: { probe: { ts: "{{ ask.ts }}", i: "{{ loop.index }}" } }
                - again: { probe: { prev: "{{ check.ok }}" } }
              recover:
                - note: { log: { message: "{{ error.message }} {{ again }}" } }
          - each:
              for_each: "{{ deal.items }}"
              as: thing
              steps:
                - one: { probe: { x: "{{ thing }} {{ loop.first }} {{ poll }}" } }
          - reply:
              wait_for: x
              timeout: 1h
              accept: "{{ event.ok and ask.ts }}"
              remind: { every: 1h, steps: [{ nudge: { probe: { t: "{{ ask.ts }}" } } }] }
        recover:
          - tell: { log: { message: "{{ error.step }} {{ reply }} {{ deal }}" } }
    """)
    assert [step.id for step in flow.body.steps] == ["ask", "poll", "each", "reply"]


def test_template_fields_become_templates_and_arguments_stay_raw() -> None:
    step = only_step("""
        - a:
            probe: { text: "hi {{ run.id }}", n: 1, nested: [ { deep: "{{ now() }}" } ] }
            if: "{{ run.id != '' }}"
    """)
    assert step.construct == Action("probe", {"text": "hi {{ run.id }}", "n": 1,
                                              "nested": [{"deep": "{{ now() }}"}]})
    assert step.if_ == Template("{{ run.id != '' }}")

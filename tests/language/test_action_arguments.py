"""An action step's literal arguments are checked at load against what the action declares:
the built-in actions' schemas, and a user action's ``arguments`` JSON Schema."""

from __future__ import annotations

from typing import Any

import pytest

from tarry.actions import ActionContext, ActionRegistry
from tarry.errors import LoadError
from tarry.language.loader import parse_flow


def problems(steps: str, actions: Any = None) -> list[str]:
    """The problems of a flow with ``steps`` (YAML list items, one a line)."""
    source = "flow: args\nsteps:\n" + "".join(f"  - {line}\n" for line in steps.splitlines())
    try:
        parse_flow(source, "flows/args.yaml", actions=actions)
    except LoadError as exc:
        return [str(problem) for problem in exc.problems]
    return []


@pytest.mark.parametrize(("step", "expected"), [
    ("one: { log: { mesage: hi } }",
     "flows/args.yaml:3:19: unknown argument 'mesage' of action 'log' (did you mean "
     "'message'?)"),
    ('two: { http.request: { ulr: "http://x" } }',
     "flows/args.yaml:3:28: unknown argument 'ulr' of action 'http.request' (did you mean "
     "'url'?)"),
    ('four: { http.request: { url: "http://x", timeout: soon } }',
     "flows/args.yaml:3:55: argument 'timeout' of action 'http.request' must be a number, got "
     "'soon'"),
    ("five: { http.request: { method: GET } }",
     "flows/args.yaml:3:27: action 'http.request' needs the argument 'url'"),
    ('seven: { emit: { tpye: order.paid, data: {} } }',
     "flows/args.yaml:3:22: unknown argument 'tpye' of action 'emit' (did you mean 'type'?)"),
    ('eight: { emit: { type: order.paid } }',
     "flows/args.yaml:3:20: action 'emit' needs the argument 'data'"),
    ('nine: { emit: { type: order.paid, data: paid } }',
     "flows/args.yaml:3:45: argument 'data' of action 'emit' must be a mapping, got 'paid'"),
    ("ten: { emit: order.paid }",
     "flows/args.yaml:3:18: action 'emit' takes a mapping of arguments, got 'order.paid'"),
    ("six: { http.request: [a, b] }",
     "flows/args.yaml:3:26: action 'http.request' takes a mapping of arguments, got a list"),
])
def test_a_mistake_in_a_built_in_actions_arguments_is_refused(step: str, expected: str) -> None:
    assert problems(step) == [expected]


@pytest.mark.parametrize("step", [
    'ok: { log: "plain text" }',
    'ok: { log: { message: "{{ run.id }}" } }',
    'ok: { http.request: { url: "{{ run.id }}", timeout: "{{ 3 }}", headers: { a: b } } }',
    "ok: { set: { anything: 1, at_all: [2] } }",
    "ok: { check: jira }",
    'ok: { http.request: "{{ run.target }}" }',
    'ok: { emit: { type: order.paid, data: { order: "{{ run.id }}" }, id: "{{ run.id }}" } }',
    'ok: { emit: { type: "{{ run.target }}", data: "{{ run.inputs }}" } }',
])
def test_good_and_computed_arguments_pass(step: str) -> None:
    assert problems(step) == []


def notify(args: dict[str, Any], ctx: ActionContext) -> None:
    """A user action that declares its arguments."""


notify.arguments = {  # type: ignore[attr-defined]
    "type": "object", "required": ["channel"], "additionalProperties": False,
    "properties": {"channel": {"type": "string"}, "text": {"type": "string"}}}


def test_a_user_action_that_declares_its_arguments_gets_the_same_checks() -> None:
    registry = ActionRegistry()
    registry.register("notify", notify)
    registry.register("untyped", lambda args, ctx: None)
    declared = registry.declared_arguments()
    assert problems("one: { notify: { chanel: ops } }\ntwo: { untyped: { what: ever } }",
                    declared) == [
        "flows/args.yaml:3:22: unknown argument 'chanel' of action 'notify' (did you mean "
        "'channel'?)"]
    assert problems("one: { notify: { channel: 7 } }", declared) == [
        "flows/args.yaml:3:31: argument 'channel' of action 'notify' must be a string, got 7"]

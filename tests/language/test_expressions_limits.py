"""Every bound on an expression: source length, nesting, string and list size, integer size
and total work."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tarry.errors import ExpressionError
from tarry.language.expressions import EvalContext, compile_template

CTX = EvalContext(now=datetime(2026, 3, 1, 12, 0, tzinfo=UTC))


def failure(source: str, scope: dict[str, Any] | None = None) -> str:
    """The reason ``source`` fails to compile or render."""
    with pytest.raises(ExpressionError) as caught:
        compile_template(source).render(scope or {}, CTX)
    return caught.value.reason


def test_a_template_may_be_10000_characters_long() -> None:
    source = "{{ 'x' }}" + "y" * (10_000 - 9)
    assert compile_template(source).render({}, CTX) == "x" + "y" * 9_991
    assert failure(source + "y") == "template is too long (10,001 characters; the limit is " \
                                    "10,000)"


@pytest.mark.parametrize("expression", [
    "-" * 60 + "1",
    "not " * 60 + "true",
    "[" * 60 + "]" * 60,
    "a" + ".b" * 60,
    "x" + " | default(1)" * 60,
])
def test_nesting_is_bounded(expression: str) -> None:
    assert failure("{{ " + expression + " }}") == "expression is nested too deeply (more " \
                                                  "than 50 levels)"


def test_parentheses_alone_do_not_nest() -> None:
    assert compile_template("{{ " + "(" * 2000 + "1" + ")" * 2000 + " }}").render({}, CTX) == 1


@pytest.mark.parametrize(("source", "scope", "reason"), [
    ("{{ 'x' * 1000001 }}", {},
     "string result is too long (1,000,001 characters; the limit is 1,000,000)"),
    ("{{ 'ab' * 999999999999999999 }}", {},
     "string result is too long (1,999,999,999,999,999,998 characters; the limit is "
     "1,000,000)"),
    ("{{ 'x' * 600000 + 'y' * 600000 }}", {},
     "string result is too long (1,200,000 characters; the limit is 1,000,000)"),
    ("{{ s }}{{ s }}", {"s": "z" * 600_000},
     "string result is too long (1,200,000 characters; the limit is 1,000,000)"),
    ("{{ big | json }}", {"big": ["abcdefgh"] * 100_000},
     "string result is too long (1,100,001 characters; the limit is 1,000,000)"),
    ("{{ [0] * 100001 }}", {},
     "list result is too long (100,001 items; the limit is 100,000)"),
    ("{{ [0] * 60000 + [1] * 60000 }}", {},
     "list result is too long (120,000 items; the limit is 100,000)"),
    ("{{ n * n * n }}", {"n": 2**2000},
     "integer result is too large (more than 4096 bits)"),
    ("{{ " + " and ".join(["'x' * 900000 != ''"] * 12) + " }}", {},
     "expression does too much work (more than 1,000,000 units)"),
    ("{{ " + " or ".join(["'z' in s"] * 11) + " }}", {"s": "x" * 1_000_000},
     "expression does too much work (more than 1,000,000 units)"),
])
def test_sizes_and_work_are_bounded(source: str, scope: dict[str, Any], reason: str) -> None:
    assert failure(source, scope) == reason


@pytest.mark.parametrize(("source", "length"), [
    ("{{ 'x' * 1000000 }}", 1_000_000),
    ("{{ [0] * 40000 }}", 40_000),
    ("{{ " + " and ".join(["'x' * 900000"] * 4) + " }}", 900_000),
])
def test_values_at_the_limits_are_allowed(source: str, length: int) -> None:
    assert len(compile_template(source).render({}, CTX)) == length


def test_a_list_at_the_limit_can_be_built() -> None:
    assert compile_template("{{ ([0] * 100000) | length }}").render({}, CTX) == 100_000


def test_each_render_has_its_own_budget() -> None:
    template = compile_template("{{ " + " and ".join(["'x' * 900000"] * 4) + " }}")
    for _ in range(3):
        assert len(template.render({}, CTX)) == 900_000


BIG = "[[1] * 100000] * 100000"
"""Ten billion items that cost only 200,000 units to build: the list repeats one list."""


@pytest.mark.parametrize("source", [
    f"{{{{ {BIG} == {BIG} }}}}",
    f"{{{{ {BIG} != {BIG} }}}}",
    f"{{{{ [1] * 99999 + [2] in {BIG} }}}}",
    f"{{{{ ({BIG}) | json }}}}",
    f"{{{{ {BIG} }}}}",
    f"list: {{{{ {BIG} }}}}",
    "{{ ['x' * 1000000] * 100000 }}",
], ids=["equal", "not-equal", "in", "json", "binding", "text", "shared-strings"])
def test_no_operator_filter_or_binding_bypasses_the_work_budget(source: str) -> None:
    assert failure(source) == "expression does too much work (more than 1,000,000 units)"


def test_comparing_values_in_scope_is_charged_too() -> None:
    shared = [[1] * 100_000] * 1_000
    assert failure("{{ a == b }}", {"a": shared, "b": shared}) == (
        "expression does too much work (more than 1,000,000 units)")

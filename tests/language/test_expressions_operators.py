"""Arithmetic, comparison, membership and boolean operators, and their type errors."""

from __future__ import annotations

import operator
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tarry.errors import ExpressionError
from tarry.language.expressions import EvalContext, compile_template

CTX = EvalContext(now=datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SCOPE: dict[str, Any] = {
    "t": T,
    "u": datetime(2026, 3, 2, 12, 0, tzinfo=UTC),
    "t_in_berlin": datetime(2026, 3, 1, 13, 0, tzinfo=timezone(timedelta(hours=1))),
    "iso": "2026-03-01T12:00:00Z",
}


def value_of(expression: str, scope: dict[str, Any] | None = None) -> Any:
    """The native value of ``{{ expression }}`` (with ``SCOPE`` unless given another)."""
    return compile_template("{{ " + expression + " }}").render(
        SCOPE if scope is None else scope, CTX)


def failure(expression: str, scope: dict[str, Any] | None = None) -> str:
    """The reason ``{{ expression }}`` fails to evaluate."""
    with pytest.raises(ExpressionError) as caught:
        value_of(expression, scope)
    return caught.value.reason


@pytest.mark.parametrize(("expression", "expected"), [
    ("7 + 2", 9),
    ("7 - 2", 5),
    ("7 * 2", 14),
    ("7 / 2", 3.5),
    ("8 / 2", 4.0),
    ("7 % 4", 3),
    ("-7 % 3", 2),
    ("1.5 + 1", 2.5),
    ("0.5 * 4", 2.0),
    ("'ab' + 'cd'", "abcd"),
    ("'ab' * 2", "abab"),
    ("2 * 'ab'", "abab"),
    ("'x' * -1", ""),
    ("[1] + [2]", [1, 2]),
    ("[0] * 3", [0, 0, 0]),
    ("3 * [0]", [0, 0, 0]),
    ("1d + 2h", timedelta(days=1, hours=2)),
    ("1d - 2h", timedelta(hours=22)),
    ("2h * 3", timedelta(hours=6)),
    ("3 * 2h", timedelta(hours=6)),
    ("1.5 * 1h", timedelta(minutes=90)),
    ("1h / 4", timedelta(minutes=15)),
    ("1h / 30m", 2.0),
    ("-1d", timedelta(days=-1)),
    ("-1.5", -1.5),
    ("t + 1d", datetime(2026, 3, 2, 12, 0, tzinfo=UTC)),
    ("1d + t", datetime(2026, 3, 2, 12, 0, tzinfo=UTC)),
    ("t - 90m", datetime(2026, 3, 1, 10, 30, tzinfo=UTC)),
    ("u - t", timedelta(days=1)),
    ("t - u", timedelta(days=-1)),
    ("(iso | date) + 1h", datetime(2026, 3, 1, 13, 0, tzinfo=UTC)),
])
def test_arithmetic(expression: str, expected: Any) -> None:
    result = value_of(expression)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(("expression", "reason"), [
    ("'x' + 1", "cannot add str and int"),
    ("1 - 'x'", "cannot subtract int and str"),
    ("true + 1", "cannot add bool and int"),
    ("null * 2", "cannot multiply null and int"),
    ("'a' * 'b'", "cannot multiply str and str"),
    ("'a' * 1.5", "cannot multiply str and float"),
    ("[1] / 2", "cannot divide list and int"),
    ("'a' % 2", "cannot take the remainder of str and int"),
    ("{} + {}", "cannot add dict and dict"),
    ("1d + 1", "cannot add duration and int"),
    ("1d * 1d", "cannot multiply duration and duration"),
    ("t + t", "cannot add instant and instant"),
    ("1d - t", "cannot subtract duration and instant"),
    ("iso - 1d", "cannot subtract str and duration (read the string as an instant with | date)"),
    ("t - iso", "cannot subtract instant and str (read the string as an instant with | date)"),
    ("-'a'", "cannot negate a str"),
    ("-true", "cannot negate a bool"),
    ("-t", "cannot negate an instant"),
    ("-null", "cannot negate null"),
    ("1 / 0", "division by zero"),
    ("1.5 / 0.0", "division by zero"),
    ("1 % 0", "division by zero"),
    ("1d / 0", "division by zero"),
    ("1e308 * 10", "result of '*' is out of range"),
    ("t + 1d * 4000000", "result of '+' is out of range"),
    ("1d * 1000000000", "result of '*' is out of range"),
])
def test_arithmetic_type_errors(expression: str, reason: str) -> None:
    assert failure(expression) == reason


@pytest.mark.parametrize(("expression", "expected"), [
    ("1 == 1.0", True),
    ("1 != 2", True),
    ("'a' == 'a'", True),
    ("'1' == 1", False),
    ("true == 1", False),
    ("false == 0", False),
    ("true == true", True),
    ("[true] == [1]", False),
    ("[1, 2] == [1, 2.0]", True),
    ("[1, 2] == [2, 1]", False),
    ("{'a': 1} == {'a': 1.0}", True),
    ("{'a': 1} == {'b': 1}", False),
    ("{'a': true} == {'a': 1}", False),
    ("null == null", True),
    ("null == false", False),
    ("t == t_in_berlin", True),
    ("t == iso", False),
    ("1d == 24h", True),
    ("1 < 2", True),
    ("2 <= 2", True),
    ("2 > 3", False),
    ("3 >= 2.5", True),
    ("'a' < 'b'", True),
    ("1d > 23h", True),
    ("t < u", True),
    ("t >= t_in_berlin", True),
    ("1 < 2 < 3", True),
    ("3 > 2 > 2", False),
    ("1 < 3 > 2", True),
    ("'x' in 'xyz'", True),
    ("'xz' in 'xyz'", False),
    ("'a' in {'a': 1}", True),
    ("1 in {'1': 1}", False),
    ("1 in [1, 2]", True),
    ("1 in [true]", False),
    ("[1] in [[1], [2]]", True),
    ("3 not in [1]", True),
    ("'q' not in 'abc'", True),
    ("'a' not in {'a': 1}", False),
])
def test_comparisons(expression: str, expected: bool) -> None:
    assert value_of(expression) is expected


@pytest.mark.parametrize(("expression", "reason"), [
    ("1 < 'a'", "cannot compare int and str with <"),
    ("t < iso", "cannot compare instant and str with < (read the string as an instant with "
                "| date)"),
    ("null <= 1", "cannot compare null and int with <="),
    ("[1] > [2]", "cannot compare list and list with >"),
    ("true >= false", "cannot compare bool and bool with >="),
    ("t < 1d", "cannot compare instant and duration with <"),
    ("1 in 5", "'in' needs a str, list or dict on its right, not int"),
    ("1 not in null", "'in' needs a str, list or dict on its right, not null"),
    ("1 in 'abc'", "'in' with a str on its right needs a str on its left, not int"),
])
def test_comparison_type_errors(expression: str, reason: str) -> None:
    assert failure(expression) == reason


@pytest.mark.parametrize(("expression", "expected"), [
    ("true and 'x'", "x"),
    ("0 and 'x'", 0),
    ("'' or 'fallback'", "fallback"),
    ("'a' or 'b'", "a"),
    ("null or []", []),
    ("not ''", True),
    ("not [1]", False),
    ("not 0d", True),
    ("false and missing", False),
    ("true or missing", True),
    ("1 and 2 and 3", 3),
    ("0 or '' or null", None),
])
def test_boolean_operators_return_operands_and_short_circuit(expression: str,
                                                              expected: Any) -> None:
    assert value_of(expression) == expected


_OPERATORS: dict[str, Callable[[int, int], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "%": operator.mod, "<": operator.lt, "==": operator.eq, ">=": operator.ge,
}


@given(st.integers(-10**12, 10**12), st.sampled_from(sorted(_OPERATORS)),
       st.integers(-10**12, 10**12))
def test_integer_arithmetic_agrees_with_python(left: int, symbol: str, right: int) -> None:
    if symbol in "/%" and right == 0:
        return
    expected = _OPERATORS[symbol](left, right)
    assert value_of(f"{left} {symbol} {right}", {}) == expected
    assert value_of(f"a {symbol} b", {"a": left, "b": right}) == expected


@given(st.integers(-1000, 1000), st.integers(-1000, 1000), st.integers(-1000, 1000))
def test_mixed_precedence_agrees_with_python(a: int, b: int, c: int) -> None:
    scope = {"a": a, "b": b, "c": c}
    assert value_of("a + b * c - -a", scope) == a + b * c - -a
    assert value_of("(a - b) * c + a * b", scope) == (a - b) * c + a * b

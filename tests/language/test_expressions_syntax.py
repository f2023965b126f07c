"""The expression grammar: literals, precedence, template splitting and compile-time errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tarry.errors import ExpressionError
from tarry.language.expressions import EvalContext, compile_template

CTX = EvalContext(now=datetime(2026, 3, 1, 12, 0, tzinfo=UTC))


def value_of(expression: str, scope: dict[str, Any] | None = None) -> Any:
    """The native value of ``{{ expression }}``."""
    return compile_template("{{ " + expression + " }}").render(scope or {}, CTX)


def compile_error(source: str) -> str:
    """The reason ``source`` does not compile."""
    with pytest.raises(ExpressionError) as caught:
        compile_template(source)
    assert caught.value.expression == source
    return caught.value.reason


@pytest.mark.parametrize(("expression", "expected"), [
    ("'single'", "single"),
    ('"double"', "double"),
    (r"'it\'s'", "it's"),
    (r'"say \"hi\""', 'say "hi"'),
    (r"'a\nb\tc\rd'", "a\nb\tc\rd"),
    (r"'back\\slash'", "back\\slash"),
    (r"'\u00e9t\u00E9'", "été"),
    (r"'\b\f\/'", "\b\f/"),
    ("''", ""),
    ("42", 42),
    ("0", 0),
    ("1.5", 1.5),
    ("2e3", 2000.0),
    ("1.5e-3", 0.0015),
    ("true", True),
    ("false", False),
    ("null", None),
    ("[]", []),
    ("[1, 'a', [true]]", [1, "a", [True]]),
    ("[1, 2,]", [1, 2]),
    ("{}", {}),
    ("{\"a\": 1, 'b': [2]}", {"a": 1, "b": [2]}),
    ("{'a': 1,}", {"a": 1}),
    ("{'k' + 'ey': 1 + 1}", {"key": 2}),
    ("1d", timedelta(days=1)),
    ("30s", timedelta(seconds=30)),
    ("500ms", timedelta(milliseconds=500)),
    ("15m", timedelta(minutes=15)),
    ("24h", timedelta(hours=24)),
    ("1w", timedelta(weeks=1)),
    ("1h30m", timedelta(hours=1, minutes=30)),
])
def test_literals(expression: str, expected: Any) -> None:
    assert value_of(expression) == expected
    assert type(value_of(expression)) is type(expected)


@pytest.mark.parametrize(("expression", "expected"), [
    ("1 + 2 * 3", 7),
    ("(1 + 2) * 3", 9),
    ("10 - 3 - 2", 5),
    ("12 / 2 / 3", 2.0),
    ("7 % 4 * 2", 6),
    ("-2 * 3", -6),
    ("- 2 + 3", 1),
    ("--2", 2),
    ("1 + 1 == 2", True),
    ("not 1 == 2", True),
    ("not true or true", True),
    ("not (true or true)", False),
    ("true or false and false", True),
    ("(true or false) and false", False),
    ("1 < 2 and 'a' in ['a']", True),
    ("[1, 2] | length + 1", 3),
    ("-'ab' | length", -2),
    ("'AB' | lower + 'c'", "abc"),
    ("x.y | default(1) is defined", True),
    ("1 + 2 in [3]", True),
    ("((((((((((1))))))))))", 1),
])
def test_precedence_follows_python(expression: str, expected: Any) -> None:
    assert value_of(expression, {"x": {}}) == expected


def test_a_flat_chain_of_many_operators_is_not_deep() -> None:
    assert value_of(" + ".join(["1"] * 2000)) == 2000


@pytest.mark.parametrize("name", ["True", "None", "truex", "nullable", "notice", "android"])
def test_keyword_lookalikes_are_plain_names(name: str) -> None:
    assert value_of(name, {name: "found"}) == "found"


@pytest.mark.parametrize(("source", "expected"), [
    ("{{ '}}' }}", "}}"),
    ('{{ "{{" }}', "{{"),
    ("{{ {'a': {'b': 1}}}}", {"a": {"b": 1}}),
    ("{{{ 'a': 1 }}}", {"a": 1}),
    ("{{ 1 }}}", "1}"),
    ("a }} b", "a }} b"),
    ("{{ 'x' }}{{ 'y' }}", "xy"),
    ("{{ '\\'}}' }}", "'}}"),
])
def test_template_splitting_respects_strings_and_braces(source: str, expected: Any) -> None:
    assert compile_template(source).render({}, CTX) == expected


@pytest.mark.parametrize(("source", "reason"), [
    ("{{ a + }}", "syntax error at position 7: the expression ends too early"),
    ("{{ a b }}", "syntax error at position 6: unexpected 'b'"),
    ("{{ a # b }}", "syntax error at position 6: unexpected character '#'"),
    ("x {{ 1 }} {{ a ) }}", "syntax error at position 16: unexpected ')'"),
    ("{{ d.keys() }}", "syntax error at position 10: unexpected '('"),
    ("{{ a[1:2] }}", "syntax error at position 7: unexpected ':'"),
    ("{{ a ** 2 }}", "syntax error at position 7: unexpected '*'"),
    ("{{ a = 1 }}", "syntax error at position 6: unexpected character '='"),
    ("{{ lambda: 1 }}", "syntax error at position 10: unexpected ':'"),
    ("{{ 1day }}", "syntax error at position 5: unexpected 'day'"),
    ("{{ }}", "empty expression at position 1"),
    ("a {{\n}}", "empty expression at position 3"),
    ("x {{ a", "'{{' at position 3 is not closed by '}}'"),
    ("{{ 'a }}", "'{{' at position 1 is not closed by '}}'"),
    ("{{ x | lowr }}", "unknown filter 'lowr' (did you mean 'lower'?)"),
    ("{{ x | frobnicate }}", "unknown filter 'frobnicate'"),
    ("{{ nw() }}", "unknown function 'nw' (did you mean 'now'?)"),
    ("{{ __import__('os') }}", "unknown function '__import__'"),
    ("{{ open('/etc/passwd') }}", "unknown function 'open'"),
    ("{{ now(1) }}", "function 'now' takes no arguments, not 1"),
    ("{{ x | minus }}", "filter 'minus' takes 1 to 2 arguments, not 0"),
    ("{{ x | default() }}", "filter 'default' takes 1 argument, not 0"),
    ("{{ x | round(1, 2) }}", "filter 'round' takes 0 to 1 arguments, not 2"),
    ("{{ x | lower(1) }}", "filter 'lower' takes no arguments, not 1"),
    ("{{ x is definde }}", "unknown test 'definde' (did you mean 'defined'?)"),
    ("{{ x is none }}", "unknown test 'none'"),
    (r"{{ 'a\qb' }}", "unknown escape '\\q' in a string literal"),
    (r"{{ '\u12' }}", "unknown escape '\\u' in a string literal"),
    ("{{ 1e999 }}", "number 1e999 is out of range"),
    ("{{ 99999999999d }}",
     "duration '99999999999d' is longer than 100 years (36525d), the longest tarry accepts"),
    ("{{ " + "9" * 2000 + " }}", "integer literal is too large (more than 4096 bits)"),
    ("{{ " + "9" * 5000 + " }}", "integer literal is too large (more than 4096 bits)"),
])
def test_compile_errors(source: str, reason: str) -> None:
    assert compile_error(source) == reason


def test_an_error_message_ends_with_the_template() -> None:
    with pytest.raises(ExpressionError, match=r"^unknown filter 'nope': Hi \{\{ x \| nope \}\}$"):
        compile_template("Hi {{ x | nope }}")


@pytest.mark.parametrize(("source", "names"), [
    ("plain text", set()),
    ("{{ deal.name }}", {"deal"}),
    ("{{ ask.ts | default(fallback) }} {{ now() }}", {"ask", "fallback"}),
    ("{{ y is defined and z[k] }}", {"y", "z", "k"}),
    ("{{ 'deal' + 1d | json }}", set()),
])
def test_names_lists_the_root_names_read(source: str, names: set[str]) -> None:
    assert compile_template(source).names == names


def test_each_source_compiles_once() -> None:
    assert compile_template("{{ a.b }}") is compile_template("{{ a.b }}")

"""Fuzzing the expression language: any template text either renders or fails with an
``ExpressionError`` (compile and evaluation alike), never another exception, and every
operator's work stays bounded."""

from __future__ import annotations

from datetime import UTC, datetime

from fuzz_support import fuzz, outcome
from hypothesis import example, given
from hypothesis import strategies as st

from tarry.errors import ExpressionError
from tarry.language.expressions import EvalContext, compile_template

CTX = EvalContext(now=datetime(2026, 3, 1, 12, 0, tzinfo=UTC), timezone="Europe/Berlin")
NAMES = {"x": 3, "s": "text", "items": [1, "a", None, [2]], "o": {"a": {"b": 1.5}},
         "when": "2026-03-01T12:00:00Z", "empty": {}}
TOKENS = ["(", ")", "[", "]", "{", "}", ",", ":", ".", "|", "and", "or", "not", "in", "is",
          "defined", "+", "-", "*", "/", "%", "==", "!=", "<", ">=", "'a'", '"b"', "'\\u12'",
          "1", "0", "1.5", "1e400", "9" * 60, "9" * 5000, "1d", "1h30m", "99999999999d", "x",
          "s", "items", "o", "when", "empty", "nope", "now()", "lower", "upper", "length",
          "json", "round", "date", "default(1)", "minus(1d)", "plus(1000000w)", "true",
          "null", "__class__", "_x"]


def templates() -> st.SearchStrategy[str]:
    """``{{ … }}`` around a sequence of the language's tokens, or any text at all."""
    body = st.lists(st.sampled_from(TOKENS), max_size=25).map(" ".join)
    return body.map(lambda text: "{{ " + text + " }}") | st.text(max_size=60)


@fuzz(300)
@given(source=templates())
@example(source="{{ " + "(" * 2000 + "1" + ")" * 2000 + " }}")
@example(source="{{ " + "[" * 2000 + "]" * 2000 + " }}")
@example(source="{{ " + "9" * 4300 + " }}")
@example(source="{{ 99999999999d }}")
@example(source="{{ now() | plus(99999999999d) }}")
@example(source="{{ 1d * 10000000000 }}")
@example(source="{{ 'ab' * 100000000 }}")
@example(source="{{ [[1] * 1000] * 1000 == [[1] * 1000] * 1000 }}")
def test_any_template_renders_or_fails_with_an_expression_error(source: str) -> None:
    result = outcome(lambda: compile_template(source).render(NAMES, CTX))
    if isinstance(result, Exception):
        assert isinstance(result, ExpressionError), repr(result)
        assert str(result)

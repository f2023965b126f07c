"""Fuzzing schema patterns: any text as a ``pattern`` or a ``patternProperties`` key is
accepted or refused with a reason, never an exception; an accepted one checks any text (the
ReDoS shapes included) in linear time."""

from __future__ import annotations

import time

from fuzz_support import fuzz, outcome
from hypothesis import example, given
from hypothesis import strategies as st

from tarry.language.schemas import SchemaProblem, schema_problem, validation_problems, validator

_PATTERN_ATOMS = st.sampled_from(["a", "(", ")", "+", "*", "?", "|", "$", "^", "\\1", "(?=",
                                  "(?<!", "[", "]", "{2,3}", "\\d", ".", "\\", "\x00", "é"])
PATTERNS = st.lists(_PATTERN_ATOMS, max_size=12).map("".join) | st.text(max_size=20)


@fuzz(200)
@given(pattern=PATTERNS, text=st.text(max_size=50), key=st.booleans())
@example(pattern="(a+)+$", text="a" * 41 + "!", key=False)
@example(pattern="(a|aa)+$", text="a" * 60 + "!", key=True)
@example(pattern="(a)\\1", text="aa", key=False)
@example(pattern="[[", text="[", key=False)
def test_any_pattern_is_refused_with_a_reason_or_checks_in_linear_time(
        pattern: str, text: str, key: bool) -> None:
    schema = ({"patternProperties": {pattern: {"type": "null"}}} if key
              else {"properties": {"v": {"pattern": pattern}}})
    problem = outcome(lambda: schema_problem(schema))
    assert problem is None or isinstance(problem, SchemaProblem), repr(problem)
    if problem is None:
        began = time.perf_counter()
        problems = validation_problems(validator(schema), {"v": text, text: 1})
        assert isinstance(problems, list)
        assert time.perf_counter() - began < 1.0
    else:
        assert problem.message

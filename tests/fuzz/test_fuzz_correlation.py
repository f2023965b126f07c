"""Fuzzing correlation paths: any text either parses to segments that spell it again or is
refused with a ValueError; reading any parsed path in any JSON-shaped payload gives a value
or the reason there is none, naming the path; and a manifest with any path loads or is
refused with located problems."""

from __future__ import annotations

from typing import Any

from fuzz_support import fuzz, hostile_json, outcome
from hypothesis import example, given
from hypothesis import strategies as st

from tarry.errors import LoadError
from tarry.language.correlation import parse_path, path_text, schema_refutes, value_at
from tarry.language.manifests import parse_manifests

_PATHISH = st.text(st.sampled_from("ab0_-.$ é\x00\n:{}[]'\""), max_size=20) | st.text(max_size=20)


@fuzz(200)
@given(text=_PATHISH)
@example(text="")
@example(text=".")
@example(text="a..b")
@example(text="0.0")
def test_any_text_parses_to_a_path_that_spells_it_or_is_refused(text: str) -> None:
    result = outcome(lambda: parse_path(text))
    if isinstance(result, Exception):
        assert isinstance(result, ValueError), repr(result)
        assert str(result)
    else:
        assert path_text(result) == text
        assert all(result)


@fuzz(200)
@given(path=st.lists(st.sampled_from(["a", "b", "0", "1"]), min_size=1, max_size=4),
       data=hostile_json())
@example(path=["0"], data=[1])
@example(path=["a", "0"], data={"a": [True]})
def test_reading_a_path_gives_a_scalar_or_a_reason_naming_it(path: list[str],
                                                              data: Any) -> None:
    value, problem = value_at(data, tuple(path))
    if problem is None:
        assert isinstance(value, str | int | float)
    else:
        assert value is None
        assert f"'{'.'.join(path)}'" in problem


@fuzz(100)
@given(schema=hostile_json(), path=st.lists(st.sampled_from(["a", "0", "b"]), min_size=1,
                                            max_size=4))
def test_any_schema_shape_refutes_a_path_or_not_without_failing(schema: Any,
                                                                 path: list[str]) -> None:
    if isinstance(schema, dict):
        refuted = schema_refutes(schema, tuple(path))
        assert refuted is None or isinstance(refuted, str)


@fuzz(100)
@given(path=_PATHISH)
def test_a_manifest_with_any_path_loads_or_is_refused_with_located_problems(path: str) -> None:
    text = f"events:\n  e:\n    correlate_on: {{ k: {path!r} }}\n"
    result = outcome(lambda: parse_manifests(text, "events.yaml"))
    if isinstance(result, Exception):
        assert isinstance(result, LoadError), repr(result)
        assert all(problem.line >= 1 for problem in result.problems)
    else:
        assert result["e"].correlate_on == ("k",)

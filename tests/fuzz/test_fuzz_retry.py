"""Fuzzing a retry's reading of a failed run: whatever the stored state and the error's step
path (a state written by any release, a path of any text), making the state ready to run
again never raises, never changes what it was given, and forgets only journal entries the run
has; and an operator's reason is either kept as text any store takes or refused with tarry's
own error."""

from __future__ import annotations

import copy
import json
from typing import Any

from fuzz_support import fuzz, hostile_json, outcome
from hypothesis import example, given
from hypothesis import strategies as st

from tarry.engine.operating import checked_reason
from tarry.engine.retrying import rearm
from tarry.errors import InvalidRequest, InvalidValue
from tarry.model import JournalEntry

_PATHS = st.lists(st.sampled_from(["a", "b", "[0]", "[1]", ".", "remind", "each", "[x]", "]"]),
                  max_size=8).map("".join) | st.text(max_size=20)

_FRAME = st.recursive(
    st.fixed_dictionaries({"at": st.integers(0, 3), "b": st.just({})}),
    lambda children: st.fixed_dictionaries({
        "at": st.integers(0, 3), "b": st.just({}),
        "cur": st.one_of(hostile_json(5), st.fixed_dictionaries({
            "frame": children, "remind_frame": children,
            "live": st.dictionaries(st.sampled_from(["0", "1"]), children, max_size=2),
            "failures": st.integers(-2, 3) | hostile_json(2)}))}),
    max_leaves=6)

_STATES = (st.fixed_dictionaries({"root": _FRAME})
           | st.fixed_dictionaries({"journal": st.fixed_dictionaries({
               "ops": st.dictionaries(_PATHS, st.just({"error": {}}), max_size=4),
               "order": st.dictionaries(st.sampled_from(["", "fan[0]."]), st.lists(
                   st.tuples(st.sampled_from(["step", "wait"]), _PATHS).map(list),
                   max_size=4), max_size=2)})})
           | hostile_json(10).filter(lambda value: isinstance(value, dict)))


@fuzz(300)
@given(state=_STATES, step=_PATHS | st.none() | st.integers())
@example(state={"root": {"at": 0, "b": {}, "cur": {"live": {"1": None}, "failures": "x"}}},
         step="each[1].call")
@example(state={"journal": {"ops": {}}}, step="a")
@example(state={"journal": {"ops": {"a": {}}, "order": {"": [["step", "a"]]}}}, step="a")
def test_rearm_never_raises_and_leaves_its_input_alone(state: dict[str, Any],
                                                       step: Any) -> None:
    given_state = copy.deepcopy(state)
    journal = [JournalEntry("op", key, {"in": "", "kind": "step", "entry": {"error": {}}})
               for key in (state.get("journal") or {}).get("ops", {}) if isinstance(key, str)]

    result = outcome(lambda: rearm(state, {"step": step}, journal))

    assert not isinstance(result, Exception), result
    assert json.dumps(state, sort_keys=True, default=repr) == json.dumps(
        given_state, sort_keys=True, default=repr)
    assert set(result.forget) <= {(entry.scope, entry.key) for entry in journal}


@fuzz(300)
@given(reason=st.text(st.characters(codec=None, categories=None), max_size=1100))
@example(reason="\x00")
@example(reason="\ud800")
@example(reason="é" * 600)
def test_a_reason_is_kept_as_portable_text_or_refused_clearly(reason: str) -> None:
    result = outcome(lambda: checked_reason(reason))
    if isinstance(result, Exception):
        assert isinstance(result, InvalidRequest | InvalidValue), result
        assert str(result).startswith(("a reason is at most 1,024 bytes", "the reason: "))
        return
    assert result is None or (result == reason.strip() and "\x00" not in result
                              and len(result.encode("utf-8")) <= 1024)

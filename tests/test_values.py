"""The portable-value check (tarry.values), fuzzed: what it accepts every store keeps exactly,
what it refuses it refuses with InvalidValue and never another exception."""

from __future__ import annotations

import contextlib
import json
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tarry.errors import InvalidValue, ValueTooLarge
from tarry.model import EventState, NewEvent
from tarry.store.base import Store
from tarry.values import MAX_DEPTH, check_key, check_value, json_size, load_json, printable

NOW = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)

portable_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
portable_scalars = st.one_of(st.none(), st.booleans(), st.integers(),
                             st.floats(allow_nan=False, allow_infinity=False), portable_text)
portable_values = st.recursive(
    portable_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(portable_text, inner, max_size=5)),
    max_leaves=30)

any_text = st.text(st.characters(blacklist_categories=()))
poisons = st.one_of(st.just(float("nan")), st.just(float("inf")), st.just(-float("inf")),
                    st.just(Decimal("1.5")), st.just(b"bytes"), st.just({1, 2}),
                    st.just("a\x00b"), st.just("\ud800"), st.just({1: "int key"}),
                    st.just({"\udc00": "surrogate key"}), st.just(object()))


def _inject(value: Any, poison: Any, path: list[int]) -> Any:
    """``value`` with ``poison`` put somewhere inside it (``path`` picks where)."""
    if not path:
        return poison
    choice, rest = path[0], path[1:]
    if isinstance(value, list) and value:
        copy = list(value)
        copy[choice % len(copy)] = _inject(copy[choice % len(copy)], poison, rest)
        return copy
    if isinstance(value, dict) and value:
        key = sorted(value)[choice % len(value)]
        return {**value, key: _inject(value[key], poison, rest)}
    return [value, poison]


@given(portable_values)
def test_a_portable_value_passes_when_within_its_limit(value: Any) -> None:
    check_value(value, "v", json_size(value))
    if json_size(value) > 1:
        with pytest.raises(ValueTooLarge):
            check_value(value, "v", json_size(value) - 1)


@given(portable_values, poisons, st.lists(st.integers(0, 9), max_size=6))
def test_a_value_with_anything_no_store_keeps_inside_is_refused_as_invalid(
        value: Any, poison: Any, path: list[int]) -> None:
    with pytest.raises(InvalidValue) as refused:
        check_value(_inject(value, poison, path), "the event's data", 10**9)
    assert str(refused.value).startswith("the event's data: ")
    assert not isinstance(refused.value, ValueTooLarge)


@given(st.recursive(st.one_of(portable_scalars, any_text, st.floats(), st.binary()),
                    lambda inner: st.one_of(st.lists(inner, max_size=4),
                                            st.tuples(inner, inner),
                                            st.dictionaries(st.one_of(any_text, st.integers()),
                                                            inner, max_size=4)),
                    max_leaves=20))
def test_the_check_raises_nothing_but_invalid_value(value: Any) -> None:
    with contextlib.suppress(InvalidValue):
        check_value(value, "v", 512)


@given(any_text)
def test_printable_text_is_always_storable_and_unchanged_when_it_already_was(text: str) -> None:
    shown = printable(text)
    check_value(shown, "message", 10**9)
    if "\x00" not in text and all(not 0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert shown == text


def test_nesting_is_bounded_at_any_depth_without_recursion() -> None:
    deep: Any = "leaf"
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(InvalidValue, match=f"nest deeper than {MAX_DEPTH} levels$"):
        check_value(deep, "v", 10**9)


def test_a_key_is_held_to_key_bytes() -> None:
    check_key("k" * 510, "the event id", 512)
    with pytest.raises(ValueTooLarge, match=r"^the event id: 513 bytes as JSON"):
        check_key("k" * 511, "the event id", 512)


stored_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), portable_text,
              st.floats(allow_nan=False, allow_infinity=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(portable_text, inner, max_size=5)),
    max_leaves=30)


def as_json(value: Any) -> str:
    """``value``'s JSON, types included (1 is not 1.0), its objects' keys sorted (jsonb
    keeps them in an order of its own)."""
    return json.dumps(value, sort_keys=True)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=stored_values, key=portable_text)
def test_every_store_keeps_what_the_check_accepts_exactly(store: Store, data: Any,
                                                          key: str) -> None:
    payload = {"data": data, "key": key}
    check_value(payload, "the event's data", 1_048_576)
    event_id = uuid.uuid4().hex
    recorded = store.record_event(NewEvent(id=event_id, type="fuzz", data=payload,
                                           received_at=NOW, match_key=key), NOW)
    assert recorded.state is EventState.UNMATCHED
    # a number is kept as its value: 9.3e16 reads back as 93000000000000000 on every store
    assert as_json(store.get_event(event_id).data) == as_json(load_json(json.dumps(payload)))


@pytest.mark.parametrize(("text", "value"), [
    ("1e+20", 100000000000000000000), ("1.7976931348623157e+308", 17976931348623157 * 10**292),
    ("-0.0", 0.0), ("0e0", 0), ("2.0", 2.0), ("1e-05", 1e-05), ("-1.5e-07", -1.5e-07),
    ("123", 123), ("0.1", 0.1)])
def test_a_stored_number_reads_as_postgresql_keeps_it(text: str, value: Any) -> None:
    assert as_json(load_json(text)) == as_json(value)

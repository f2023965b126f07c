"""Names, keys and indexes; ``is defined`` and ``default`` on missing chains; the sandbox."""

from __future__ import annotations

from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

import pytest

from tarry.errors import ExpressionError
from tarry.language.expressions import EvalContext, compile_template

CTX = EvalContext(now=datetime(2026, 3, 1, 12, 0, tzinfo=UTC))


class Secret:
    """A Python object that must stay opaque to expressions."""

    password = "hunter2"


SCOPE: dict[str, Any] = {
    "deal": {
        "name": "Acme",
        "owner": None,
        "tags": ["a", "b"],
        "approval": {"event": {"approved": True}},
        "items": {"k": 1},
    },
    "items": [{"id": 1}],
    "secret": Secret(),
    "frozen": MappingProxyType({"k": "v"}),
}


def value_of(expression: str) -> Any:
    """The native value of ``{{ expression }}`` over ``SCOPE``."""
    return compile_template("{{ " + expression + " }}").render(SCOPE, CTX)


def failure(expression: str) -> str:
    """The reason ``{{ expression }}`` fails to evaluate."""
    with pytest.raises(ExpressionError) as caught:
        value_of(expression)
    return caught.value.reason


@pytest.mark.parametrize(("expression", "expected"), [
    ("deal.name", "Acme"),
    ("deal['name']", "Acme"),
    ("deal[\"na\" + 'me']", "Acme"),
    ("deal.tags[0]", "a"),
    ("deal.tags[-1]", "b"),
    ("deal.tags[-2]", "a"),
    ("items[0].id", 1),
    ("deal.approval.event.approved", True),
    ("deal.items.k", 1),
    ("deal . approval . event", {"approved": True}),
    ("frozen.k", "v"),
    ("{'a': [10, 20]}.a[1]", 20),
    ("[[1, 2]][0][1]", 2),
    ("(deal | default({})).name", "Acme"),
])
def test_access(expression: str, expected: Any) -> None:
    assert value_of(expression) == expected


@pytest.mark.parametrize(("expression", "reason"), [
    ("missing", "undefined name 'missing'"),
    ("dael.name", "undefined name 'dael' (did you mean 'deal'?)"),
    ("deal.approval.evnt", "'deal.approval' has no key 'evnt' (did you mean 'event'?)"),
    ("deal.nme", "'deal' has no key 'nme' (did you mean 'name'?)"),
    ("deal.zzz", "'deal' has no key 'zzz'"),
    ("deal . approval . evnt", "'deal . approval' has no key 'evnt' (did you mean 'event'?)"),
    ("deal.tags[2]", "'deal.tags' has no index 2 (its length is 2)"),
    ("deal.tags[-3]", "'deal.tags' has no index -3 (its length is 2)"),
    ("deal.tags.first", "'deal.tags' is a list and has no key 'first'"),
    ("deal.tags[true]", "cannot index list 'deal.tags' with a bool; use an int"),
    ("deal.tags[1.0]", "cannot index list 'deal.tags' with a float; use an int"),
    ("deal[0]", "cannot index dict 'deal' with an int; its keys are strings"),
    ("deal.owner.name", "cannot read key 'name' of 'deal.owner': it is null"),
    ("deal.name[0]", "cannot read index 0 of 'deal.name': it is a str"),
    ("deal.name[null]", "cannot read null key of 'deal.name': it is a str"),
    ("now().year", "cannot read key 'year' of 'now()': it is an instant"),
    ("1d.days", "cannot read key 'days' of '1d': it is a duration"),
    ("deal[missing]", "undefined name 'missing'"),
    ("{1: 2}", "object keys must be strings, not int"),
])
def test_access_errors(expression: str, reason: str) -> None:
    assert failure(expression) == reason


@pytest.mark.parametrize(("expression", "reason"), [
    ("secret.password", "cannot read key 'password' of 'secret': it is a Secret"),
    ("secret.__class__", "cannot read key '__class__' of 'secret': it is a Secret"),
    ("secret['__dict__']", "cannot read key '__dict__' of 'secret': it is a Secret"),
    ("'x'.__class__", "cannot read key '__class__' of ''x'': it is a str"),
    ("deal.keys", "'deal' has no key 'keys'"),
    ("deal.__class__", "'deal' has no key '__class__'"),
    ("deal.tags.append", "'deal.tags' is a list and has no key 'append'"),
])
def test_no_attribute_of_python_objects_is_reachable(expression: str, reason: str) -> None:
    assert failure(expression) == reason


@pytest.mark.parametrize(("expression", "expected"), [
    ("deal.name is defined", True),
    ("deal.owner is defined", True),
    ("items[0].id is defined", True),
    ("deal.tags[-2] is defined", True),
    ("missing is defined", False),
    ("missing.a.b is defined", False),
    ("deal.nope is defined", False),
    ("deal.nope.deeper[0] is defined", False),
    ("deal.tags[5] is defined", False),
    ("deal.tags[-3] is defined", False),
    ("deal.tags['x'] is defined", False),
    ("deal.owner.name is defined", False),
    ("deal.name.x is defined", False),
    ("secret.password is defined", False),
    ("deal[0] is defined", False),
    ("missing is not defined", True),
    ("deal.nope.x is not defined", True),
    ("deal.name is not defined", False),
    ("1 + 1 is defined", True),
    ("missing is defined or deal.name is defined", True),
    ("not missing is defined", True),
])
def test_is_defined_never_raises_along_a_missing_chain(expression: str, expected: bool) -> None:
    assert value_of(expression) is expected


def test_is_defined_still_evaluates_index_expressions_strictly() -> None:
    assert failure("deal[missing] is defined") == "undefined name 'missing'"


@pytest.mark.parametrize(("expression", "expected"), [
    ("missing | default('x')", "x"),
    ("deal.nope.x | default(0)", 0),
    ("deal.tags[9] | default('none')", "none"),
    ("deal.owner | default('nobody')", "nobody"),
    ("deal.owner.name | default('nobody')", "nobody"),
    ("deal.name | default('x')", "Acme"),
    ("false | default(true)", False),
    ("'' | default('x')", ""),
    ("0 | default(1)", 0),
    ("missing | default(other | default(3))", 3),
    ("missing | default({}) | length", 0),
    ("missing | default({'a': 1}).a", 1),
])
def test_default_catches_undefined_and_null(expression: str, expected: Any) -> None:
    assert value_of(expression) == expected


def test_default_does_not_hide_other_errors() -> None:
    assert failure("(1 + 'a') | default(0)") == "cannot add int and str"
    assert failure("missing | lower | default('x')") == "undefined name 'missing'"

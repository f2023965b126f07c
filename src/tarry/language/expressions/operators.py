"""Arithmetic, comparison, membership and equality over expression values.

Arithmetic is a table keyed by (operator, left kind, right kind); a pair missing from the table
is a type error naming both kinds ("cannot add str and int"). Booleans are not numbers here:
``true + 1`` is an error and ``true == 1`` is false, as in JSON.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from tarry.errors import ExpressionError
from tarry.language.expressions.context import Env
from tarry.language.expressions.limits import (
    CHARS_PER_UNIT,
    ITEM_WORK,
    MAX_INT_BITS,
    STEP_WORK,
    check_list_size,
    check_string_size,
)
from tarry.language.expressions.values import kind_of, with_article

__all__ = ["COMPARISONS", "BinaryOp", "arithmetic", "equal", "negate"]

BinaryOp = Callable[[Any, Any, Env], Any]
"""An operator applied to its left and right values within one render."""

_VERBS = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide",
          "%": "take the remainder of"}
_NUMBERS = ("int", "float")


def _hint(left_kind: str, right_kind: str) -> str:
    """A pointer to ``| date`` when a string meets an instant or a duration."""
    kinds = {left_kind, right_kind}
    if "str" in kinds and kinds & {"instant", "duration"}:
        return " (read the string as an instant with | date)"
    return ""


def _number(value: Any) -> Any:
    """``value`` when it is a finite float or an int of bounded size."""
    if type(value) is float and not math.isfinite(value):
        raise OverflowError
    if type(value) is int and value.bit_length() > MAX_INT_BITS:
        raise ExpressionError(f"integer result is too large (more than {MAX_INT_BITS} bits)")
    return value


def _numeric(op: Callable[[Any, Any], Any]) -> BinaryOp:
    """An arithmetic operator on numbers, with its result bounded."""
    return lambda left, right, _env: _number(op(left, right))


def _plain(op: Callable[[Any, Any], Any]) -> BinaryOp:
    """An operator whose cost does not depend on the size of its operands."""
    return lambda left, right, _env: op(left, right)


_SIZE_CHECKS: dict[str, Callable[[int], None]] = {"str": check_string_size,
                                                  "list": check_list_size}


def _concat(left: Any, right: Any, env: Env) -> Any:
    """``str + str`` or ``list + list``, refused before it is built when too long."""
    size = len(left) + len(right)
    _charge_copy(kind_of(left), size, env)
    return left + right


def _repeat(sequence: Any, count: int, env: Env) -> Any:
    """``str * int`` or ``list * int``, refused before it is built when too long."""
    size = len(sequence) * max(count, 0)
    _charge_copy(kind_of(sequence), size, env)
    return sequence * count


def _charge_copy(kind: str, size: int, env: Env) -> None:
    """Refuse a string or list of ``size`` over its limit, else pay for building it: its
    characters copied, or its items (a pointer each)."""
    _SIZE_CHECKS[kind](size)
    if kind == "str":
        env.charge_text(size)
    else:
        env.charge(size)


def _number_pairs(symbol: str, op: Callable[[Any, Any], Any]) -> dict[tuple[str, str, str],
                                                                        BinaryOp]:
    """``symbol`` between every pair of number kinds."""
    return {(symbol, left, right): _numeric(op) for left in _NUMBERS for right in _NUMBERS}


def _duration_scaling() -> dict[tuple[str, str, str], BinaryOp]:
    """Durations multiplied or divided by numbers."""
    table: dict[tuple[str, str, str], BinaryOp] = {}
    for number in _NUMBERS:
        table["*", "duration", number] = _plain(operator.mul)
        table["*", number, "duration"] = _plain(operator.mul)
        table["/", "duration", number] = _plain(operator.truediv)
    return table


_ARITHMETIC: dict[tuple[str, str, str], BinaryOp] = {
    **_number_pairs("+", operator.add),
    **_number_pairs("-", operator.sub),
    **_number_pairs("*", operator.mul),
    **_number_pairs("/", operator.truediv),
    **_number_pairs("%", operator.mod),
    ("+", "str", "str"): _concat,
    ("+", "list", "list"): _concat,
    ("*", "str", "int"): _repeat,
    ("*", "list", "int"): _repeat,
    ("*", "int", "str"): lambda left, right, env: _repeat(right, left, env),
    ("*", "int", "list"): lambda left, right, env: _repeat(right, left, env),
    ("+", "instant", "duration"): _plain(operator.add),
    ("+", "duration", "instant"): _plain(operator.add),
    ("-", "instant", "duration"): _plain(operator.sub),
    ("-", "instant", "instant"): _plain(operator.sub),
    ("+", "duration", "duration"): _plain(operator.add),
    ("-", "duration", "duration"): _plain(operator.sub),
    ("/", "duration", "duration"): _plain(operator.truediv),
    **_duration_scaling(),
}
"""(operator, left kind, right kind) → the operation; absent pairs are type errors."""


def arithmetic(symbol: str, left: Any, right: Any, env: Env) -> Any:
    """Apply the arithmetic operator ``symbol``."""
    left_kind, right_kind = kind_of(left), kind_of(right)
    apply = _ARITHMETIC.get((symbol, left_kind, right_kind))
    if apply is None:
        raise ExpressionError(f"cannot {_VERBS[symbol]} {left_kind} and {right_kind}"
                              + _hint(left_kind, right_kind))
    try:
        return apply(left, right, env)
    except ZeroDivisionError:
        raise ExpressionError("division by zero") from None
    except OverflowError:
        raise ExpressionError(f"result of '{symbol}' is out of range") from None


def negate(value: Any) -> Any:
    """Unary minus, for numbers and durations."""
    if kind_of(value) not in {"int", "float", "duration"}:
        raise ExpressionError(f"cannot negate {with_article(kind_of(value))}")
    return -value


_SCALARS = frozenset({str, int, float, bool, type(None), timedelta, datetime})
_FLAT = frozenset({int, float, type(None)})
"""Item types for which a list's Python equality is JSON equality (no bool: True == 1)."""


def equal(left: Any, right: Any, env: Env) -> bool:
    """JSON equality: ``1 == 1.0``, but a boolean never equals a number; deep for containers,
    each item compared charged to the work budget as a step (and a string by its length)."""
    if type(left) is type(right) and type(left) in _SCALARS:
        env.charge(STEP_WORK + len(left) // CHARS_PER_UNIT if type(left) is str else STEP_WORK)
        return bool(left == right)
    left_kind, right_kind = kind_of(left), kind_of(right)
    env.charge(STEP_WORK)
    if left_kind != right_kind:
        return left_kind in _NUMBERS and right_kind in _NUMBERS and bool(left == right)
    if left_kind == "list":
        if len(left) != len(right):
            return False
        env.charge(len(left) * ITEM_WORK)
        if set(map(type, left)) | set(map(type, right)) <= _FLAT:  # Python's == is JSON's
            return bool(left == right)
        return all(equal(a, b, env) for a, b in zip(left, right, strict=True))
    if left_kind == "dict":
        return left.keys() == right.keys() and all(equal(value, right[key], env)
                                                   for key, value in left.items())
    return bool(left == right)


_ORDER_GROUPS = {"int": "number", "float": "number", "str": "str", "instant": "instant",
                 "duration": "duration"}


def _ordering(symbol: str, op: Callable[[Any, Any], bool]) -> BinaryOp:
    """An ordering operator, defined between two numbers, strings, instants or durations."""
    def compare(left: Any, right: Any, _env: Env) -> bool:
        left_kind, right_kind = kind_of(left), kind_of(right)
        group = _ORDER_GROUPS.get(left_kind)
        if group is None or group != _ORDER_GROUPS.get(right_kind):
            raise ExpressionError(f"cannot compare {left_kind} and {right_kind} with "
                                  f"{symbol}{_hint(left_kind, right_kind)}")
        return op(left, right)
    return compare


def _contains(item: Any, container: Any, env: Env) -> bool:
    """``item in container``: an equal list item, a dict key, or a substring. A string is
    looked for at C speed (it equals only an equal string); anything else is compared with
    each item, a step each."""
    kind = kind_of(container)
    if kind == "list":
        env.charge(len(container) * ITEM_WORK)
        if type(item) is str:
            return item in container
        return any(equal(item, candidate, env) for candidate in container)
    if kind == "dict":
        return isinstance(item, str) and item in container
    if kind != "str":
        raise ExpressionError(f"'in' needs a str, list or dict on its right, not {kind}")
    if not isinstance(item, str):
        raise ExpressionError(f"'in' with a str on its right needs a str on its left, not "
                              f"{kind_of(item)}")
    env.charge_text(len(container))
    return item in container


COMPARISONS: dict[str, BinaryOp] = {
    "==": equal,
    "!=": lambda left, right, env: not equal(left, right, env),
    "<": _ordering("<", operator.lt),
    "<=": _ordering("<=", operator.le),
    ">": _ordering(">", operator.gt),
    ">=": _ordering(">=", operator.ge),
    "in": _contains,
    "not in": lambda left, right, env: not _contains(left, right, env),
}
"""Comparison operators by their spelling; each returns a bool."""

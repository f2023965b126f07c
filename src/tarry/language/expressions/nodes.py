"""The compiled form of an expression: a tree of small immutable nodes that evaluate themselves.

Every node has ``evaluate(env)``, which raises :class:`~tarry.errors.ExpressionError` for a
missing name, key or index. Access nodes also have a lenient ``lookup(env)`` that yields
:data:`~tarry.language.expressions.values.UNDEFINED` instead; ``is defined`` and the
``default`` filter read their operand with it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from tarry._suggest import did_you_mean
from tarry.errors import ExpressionError
from tarry.language.expressions.access import read, unreadable
from tarry.language.expressions.context import Env
from tarry.language.expressions.filters import FilterSpec, FunctionSpec
from tarry.language.expressions.operators import BinaryOp, arithmetic, negate
from tarry.language.expressions.values import UNDEFINED, kind_of

__all__ = [
    "Access",
    "And",
    "Arithmetic",
    "Call",
    "Comparison",
    "Filter",
    "IsDefined",
    "ListDisplay",
    "Literal",
    "Name",
    "Negative",
    "Node",
    "Not",
    "ObjectDisplay",
    "Or",
]


class Node(ABC):
    """One node of a compiled expression."""

    __slots__ = ()

    @abstractmethod
    def evaluate(self, env: Env) -> Any:
        """The node's value; raise ``ExpressionError`` when it has none."""

    def lookup(self, env: Env) -> Any:
        """The node's value, or ``UNDEFINED`` where an access chain does not resolve."""
        return self.evaluate(env)

    @property
    def prepaid(self) -> bool:
        """Whether writing the node's value out needs no walk to be paid for: a constant of
        the source, or a value read from the scope (the run's inputs, bindings, events: each
        within the store's size limits and shared with nothing). A value an operator built
        may repeat one list into itself, so it is walked (:meth:`Env.charge_value`)."""
        return False


@dataclass(frozen=True, slots=True)
class Literal(Node):
    """A constant: string, number, boolean, null or duration."""

    value: Any

    def evaluate(self, env: Env) -> Any:
        """The constant."""
        return self.value

    @property
    def prepaid(self) -> bool:
        """A constant of the source: bounded by its length."""
        return True


@dataclass(frozen=True, slots=True)
class ListDisplay(Node):
    """``[a, b, …]``: a new list on every evaluation."""

    items: tuple[Node, ...]

    def evaluate(self, env: Env) -> list[Any]:
        """The list of the items' values."""
        return [item.evaluate(env) for item in self.items]

    @property
    def prepaid(self) -> bool:
        """``[]`` (a list of items may repeat one value: walked)."""
        return not self.items


@dataclass(frozen=True, slots=True)
class ObjectDisplay(Node):
    """``{key: value, …}``: a new dict on every evaluation; keys must be strings."""

    pairs: tuple[tuple[Node, Node], ...]

    def evaluate(self, env: Env) -> dict[str, Any]:
        """The dict of the pairs' values."""
        result: dict[str, Any] = {}
        for key_node, value_node in self.pairs:
            key = key_node.evaluate(env)
            if not isinstance(key, str):
                raise ExpressionError(f"object keys must be strings, not {kind_of(key)}")
            result[key] = value_node.evaluate(env)
        return result

    @property
    def prepaid(self) -> bool:
        """``{}`` (an object of values may repeat one value: walked)."""
        return not self.pairs


@dataclass(frozen=True, slots=True)
class Name(Node):
    """A root name of the scope (an input, a step binding, ``run``, ``event``, …)."""

    name: str

    def evaluate(self, env: Env) -> Any:
        """The name's value; an undefined name is an error."""
        try:
            return env.scope[self.name]
        except KeyError:
            raise ExpressionError(f"undefined name '{self.name}'"
                                  + did_you_mean(self.name, env.scope)) from None

    def lookup(self, env: Env) -> Any:
        """The name's value or ``UNDEFINED``."""
        return env.scope.get(self.name, UNDEFINED)

    @property
    def prepaid(self) -> bool:
        """A value of the scope."""
        return True


@dataclass(frozen=True, slots=True)
class Access(Node):
    """``base.key`` or ``base[key]``: a dict key or a list index. ``label`` is the source of
    ``base``, for messages."""

    base: Node
    key: Node
    label: str

    def evaluate(self, env: Env) -> Any:
        """The item; a missing key or index is an error naming the container."""
        container = self.base.evaluate(env)
        key = self.key.evaluate(env)
        value = read(container, key)
        if value is UNDEFINED:
            raise ExpressionError(unreadable(container, key, self.label))
        return value

    def lookup(self, env: Env) -> Any:
        """The item, or ``UNDEFINED`` when anything along the chain is missing."""
        container = self.base.lookup(env)
        return UNDEFINED if container is UNDEFINED else read(container, self.key.evaluate(env))

    @property
    def prepaid(self) -> bool:
        """A part of what ``base`` is, prepaid when that is."""
        return self.base.prepaid


@dataclass(frozen=True, slots=True)
class IsDefined(Node):
    """``operand is defined`` / ``operand is not defined``: never raises for a missing chain."""

    operand: Node
    negated: bool

    def evaluate(self, env: Env) -> bool:
        """Whether the operand resolves (inverted for ``is not defined``)."""
        return (self.operand.lookup(env) is not UNDEFINED) != self.negated


@dataclass(frozen=True, slots=True)
class Filter(Node):
    """``operand | name(args)``."""

    operand: Node
    spec: FilterSpec
    args: tuple[Node, ...]

    def evaluate(self, env: Env) -> Any:
        """The filter applied to the operand's value and the arguments' values (a filter
        that writes its value out, such as ``json``, pays for the walk first unless the
        value is prepaid)."""
        value = self.operand.lookup(env) if self.spec.accepts_undefined else \
            self.operand.evaluate(env)
        if self.spec.writes and not self.operand.prepaid:
            env.charge_value(value)
        return self.spec.apply(value, tuple(arg.evaluate(env) for arg in self.args), env)

    @property
    def prepaid(self) -> bool:
        """Prepaid for a filter that picks one of its prepaid inputs (``default``)."""
        return self.spec.picks and self.operand.prepaid and all(a.prepaid for a in self.args)


@dataclass(frozen=True, slots=True)
class Call(Node):
    """``name(args)``: one of the built-in functions."""

    spec: FunctionSpec
    args: tuple[Node, ...]

    def evaluate(self, env: Env) -> Any:
        """The function's result."""
        return self.spec.apply(tuple(arg.evaluate(env) for arg in self.args), env)


@dataclass(frozen=True, slots=True)
class Not(Node):
    """``not operand``."""

    operand: Node

    def evaluate(self, env: Env) -> bool:
        """The operand's truth, inverted."""
        return not self.operand.evaluate(env)


@dataclass(frozen=True, slots=True)
class Negative(Node):
    """``-operand``, for numbers and durations."""

    operand: Node

    def evaluate(self, env: Env) -> Any:
        """The operand's value, negated."""
        return negate(self.operand.evaluate(env))


@dataclass(frozen=True, slots=True)
class And(Node):
    """``a and b and …``: the first false operand's value, else the last one's."""

    operands: tuple[Node, ...]

    def evaluate(self, env: Env) -> Any:
        """Evaluate left to right, stopping at the first false value."""
        value: Any = True
        for operand in self.operands:
            value = operand.evaluate(env)
            if not value:
                return value
        return value


@dataclass(frozen=True, slots=True)
class Or(Node):
    """``a or b or …``: the first true operand's value, else the last one's."""

    operands: tuple[Node, ...]

    def evaluate(self, env: Env) -> Any:
        """Evaluate left to right, stopping at the first true value."""
        value: Any = False
        for operand in self.operands:
            value = operand.evaluate(env)
            if value:
                return value
        return value


@dataclass(frozen=True, slots=True)
class Arithmetic(Node):
    """``a + b - c …`` or ``a * b / c …``: one precedence level, left to right."""

    first: Node
    rest: tuple[tuple[str, Node], ...]

    def evaluate(self, env: Env) -> Any:
        """Fold the operators over the operands from the left."""
        value = self.first.evaluate(env)
        for symbol, operand in self.rest:
            value = arithmetic(symbol, value, operand.evaluate(env), env)
        return value


@dataclass(frozen=True, slots=True)
class Comparison(Node):
    """``a < b <= c …``: chained as in Python (each operand evaluated once)."""

    first: Node
    rest: tuple[tuple[BinaryOp, Node], ...]

    def evaluate(self, env: Env) -> bool:
        """Whether every comparison holds, stopping at the first that does not."""
        left = self.first.evaluate(env)
        for compare, operand in self.rest:
            right = operand.evaluate(env)
            if not compare(left, right, env):
                return False
            left = right
        return True


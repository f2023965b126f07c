"""From template source to nodes: find the ``{{ … }}`` spans, parse each, build the node tree.

Parsing uses the LALR grammar in ``grammar.lark``, loaded once from the tables generated from
it (``tables.py``). Names of filters, functions and
tests are resolved here, so a misspelt one is refused at compile time with a suggestion.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from tarry._suggest import did_you_mean
from tarry.errors import ExpressionError
from tarry.language.durations import parse_duration
from tarry.language.expressions.filters import FILTERS, FUNCTIONS, check_arity
from tarry.language.expressions.limits import MAX_DEPTH, MAX_INT_BITS
from tarry.language.expressions.nodes import (
    Access,
    And,
    Arithmetic,
    Call,
    Comparison,
    Filter,
    IsDefined,
    ListDisplay,
    Literal,
    Name,
    Negative,
    Node,
    Not,
    ObjectDisplay,
    Or,
)
from tarry.language.expressions.operators import COMPARISONS
from tarry.language.expressions.tables import expression_parser

__all__ = ["Segment", "parse_expression", "split_template"]

_Tree: TypeAlias = Tree[Token]


@dataclass(frozen=True)
class Segment:
    """The text between ``{{`` and ``}}``; ``start`` is its offset in the template."""

    start: int
    text: str


def split_template(source: str) -> list[str | Segment]:
    """Literal text and expression segments, in order."""
    parts: list[str | Segment] = []
    position = 0
    while (opening := source.find("{{", position)) >= 0:
        if opening > position:
            parts.append(source[position:opening])
        start = opening + 2
        end = _closing(source, start)
        parts.append(Segment(start, source[start:end]))
        position = end + 2
    if position < len(source):
        parts.append(source[position:])
    return parts


def _closing(source: str, start: int) -> int:
    """Offset of the ``}}`` closing the expression at ``start``, past strings and braces."""
    depth, quote, index = 0, "", start
    while index < len(source):
        char = source[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            if depth == 0 and source.startswith("}}", index):
                return index
            depth = max(depth - 1, 0)
        index += 1
    raise ExpressionError(f"'{{{{' at position {start - 1} is not closed by '}}}}'")


@functools.cache
def _parser() -> Lark:
    """The expression parser, loaded on first use (``tables.py``)."""
    return expression_parser()


def parse_expression(segment: Segment, names: set[str]) -> Node:
    """The node tree of one expression; root names it reads are added to ``names``."""
    if not segment.text.strip():
        raise ExpressionError(f"empty expression at position {segment.start - 1}")
    try:
        tree = _parser().parse(segment.text)
    except UnexpectedInput as exc:
        raise ExpressionError(_syntax_message(exc, segment)) from None
    if _depth(tree) > MAX_DEPTH:
        raise ExpressionError(f"expression is nested too deeply (more than {MAX_DEPTH} "
                              "levels)")
    return _Builder(segment.text, names).build(tree)


def _syntax_message(exc: UnexpectedInput, segment: Segment) -> str:
    """A syntax error with its 1-based position in the template."""
    if isinstance(exc, UnexpectedCharacters):
        offset, what = exc.pos_in_stream or 0, f"unexpected character '{exc.char}'"
    elif isinstance(exc, UnexpectedToken) and exc.token.type != "$END":
        offset, what = exc.token.start_pos or 0, f"unexpected '{exc.token}'"
    else:
        offset, what = len(segment.text.rstrip()), "the expression ends too early"
    return f"syntax error at position {segment.start + offset + 1}: {what}"


def _depth(tree: _Tree) -> int:
    """How deeply ``tree`` nests (counted without recursion: the tree may be deep)."""
    deepest, pending = 0, [(tree, 1)]
    while pending:
        node, depth = pending.pop()
        deepest = max(deepest, depth)
        pending.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))
    return deepest


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", "'": "'",
            '"': '"', "/": "/"}
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.DOTALL)


def _unescape(match: re.Match[str]) -> str:
    """One escape sequence of a string literal."""
    code = match[1]
    if len(code) == 5:
        return chr(int(code[1:], 16))
    if code not in _ESCAPES:
        raise ExpressionError(f"unknown escape '\\{code}' in a string literal")
    return _ESCAPES[code]


def _integer(token: str) -> int:
    """An integer literal, within the size limit."""
    try:
        value: int | None = int(token)
    except ValueError:  # more digits than Python converts at all
        value = None
    if value is None or value.bit_length() > MAX_INT_BITS:
        raise ExpressionError(f"integer literal is too large (more than {MAX_INT_BITS} bits)")
    return value


def _float(token: str) -> float:
    """A float literal, which must be finite."""
    value = float(token)
    if value in {float("inf"), float("-inf")}:
        raise ExpressionError(f"number {token} is out of range")
    return value


def _duration(token: str) -> Any:
    """A duration literal (``1d``, ``1h30m``)."""
    try:
        return parse_duration(token)
    except ValueError as exc:  # the grammar admits only well-formed ones: too long, then
        raise ExpressionError(str(exc)) from None


_LITERALS: dict[str, Callable[[str], Any]] = {
    "string": lambda token: _ESCAPE.sub(_unescape, token[1:-1]),
    "int": _integer,
    "float": _float,
    "duration": _duration,
}

_CONSTANTS = {"true": True, "false": False, "null": None}

_TESTS: dict[str, Callable[[Node, bool], Node]] = {"defined": IsDefined}


def _tokens(tree: Any) -> str:
    """The operator spelled by an operator rule (``not in``, ``<=``, ``+``)."""
    return " ".join(str(token) for token in tree.children)


class _Builder:
    """Turns one parse tree into nodes; ``text`` is the expression's source.

    Each public method builds the node for the grammar rule named in ``_RULES``.
    """

    def __init__(self, text: str, names: set[str]) -> None:
        self.text = text
        self.names = names

    def build(self, tree: Any) -> Node:
        """The node for ``tree``."""
        rule = str(tree.data)
        if rule in _LITERALS:
            return Literal(_LITERALS[rule](str(tree.children[0])))
        if rule in _CONSTANTS:
            return Literal(_CONSTANTS[rule])
        return _RULES[rule](self, tree)

    def _all(self, children: list[Any]) -> tuple[Node, ...]:
        return tuple(self.build(child) for child in children)

    def _label(self, tree: Any) -> str:
        """The source text of ``tree``."""
        return self.text[tree.meta.start_pos:tree.meta.end_pos]

    def or_test(self, tree: _Tree) -> Node:
        return Or(self._all(tree.children))

    def and_test(self, tree: _Tree) -> Node:
        return And(self._all(tree.children))

    def negation(self, tree: _Tree) -> Node:
        return Not(self.build(tree.children[0]))

    def minus(self, tree: _Tree) -> Node:
        return Negative(self.build(tree.children[0]))

    def arithmetic(self, tree: _Tree) -> Node:
        first, *rest = tree.children
        pairs = tuple((_tokens(op), self.build(operand))
                      for op, operand in zip(rest[::2], rest[1::2], strict=True))
        return Arithmetic(self.build(first), pairs)

    def comparison(self, tree: _Tree) -> Node:
        first, *rest = tree.children
        pairs = tuple((COMPARISONS[_tokens(op)], self.build(operand))
                      for op, operand in zip(rest[::2], rest[1::2], strict=True))
        return Comparison(self.build(first), pairs)

    def test(self, tree: _Tree) -> Node:
        operand, is_op, name = tree.children
        test = _TESTS.get(str(name))
        if test is None:
            raise ExpressionError(f"unknown test '{name}'{did_you_mean(str(name), _TESTS)}")
        return test(self.build(operand), _tokens(is_op) == "is not")

    def attr(self, tree: _Tree) -> Node:
        base, name = tree.children
        return Access(self.build(base), Literal(str(name)), self._label(base))

    def index(self, tree: _Tree) -> Node:
        base, key = tree.children
        return Access(self.build(base), self.build(key), self._label(base))

    def filter(self, tree: _Tree) -> Node:
        base, name, *arguments = tree.children
        spec = FILTERS.get(str(name))
        if spec is None:
            raise ExpressionError(f"unknown filter '{name}'{did_you_mean(str(name), FILTERS)}")
        args = self._arguments(arguments)
        check_arity("filter", str(name), spec, len(args))
        return Filter(self.build(base), spec, args)

    def call(self, tree: _Tree) -> Node:
        name, arguments = tree.children
        spec = FUNCTIONS.get(str(name))
        if spec is None:
            raise ExpressionError(f"unknown function '{name}'"
                                  f"{did_you_mean(str(name), FUNCTIONS)}")
        args = self._arguments([arguments])
        check_arity("function", str(name), spec, len(args))
        return Call(spec, args)

    def _arguments(self, arguments: list[Any]) -> tuple[Node, ...]:
        """The argument nodes of an optional ``arguments`` subtree."""
        return self._all(arguments[0].children) if arguments else ()

    def name(self, tree: _Tree) -> Node:
        name = str(tree.children[0])
        self.names.add(name)
        return Name(name)

    def list(self, tree: _Tree) -> Node:
        return ListDisplay(self._all(tree.children))

    def object(self, tree: _Tree) -> Node:
        return ObjectDisplay(tuple((self.build(pair.children[0]), self.build(pair.children[1]))
                                   for pair in tree.children if isinstance(pair, Tree)))


_RULES: dict[str, Callable[[_Builder, Any], Node]] = {
    "or_test": _Builder.or_test,
    "and_test": _Builder.and_test,
    "negation": _Builder.negation,
    "minus": _Builder.minus,
    "sum": _Builder.arithmetic,
    "product": _Builder.arithmetic,
    "comparison": _Builder.comparison,
    "test": _Builder.test,
    "attr": _Builder.attr,
    "index": _Builder.index,
    "filter": _Builder.filter,
    "call": _Builder.call,
    "name": _Builder.name,
    "list": _Builder.list,
    "object": _Builder.object,
}
"""Parse-tree rule → the builder method for it (literals are handled by table)."""

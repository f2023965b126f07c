"""Templates: strings holding ``{{ … }}`` expressions, compiled once and rendered many times."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tarry.errors import ExpressionError
from tarry.language.expressions.context import Env, EvalContext
from tarry.language.expressions.filters import FILTERS
from tarry.language.expressions.limits import MAX_SOURCE_CHARS, check_string_size
from tarry.language.expressions.nodes import Filter, Literal, Node
from tarry.language.expressions.parser import parse_expression, split_template
from tarry.language.expressions.values import to_text

__all__ = ["CompiledTemplate", "calendars_named", "compile_template", "is_template", "render"]


@dataclass(frozen=True)
class CompiledTemplate:
    """A compiled template.

    ``source`` is the text as written; ``names`` the root names its expressions read;
    ``parts`` the literal text and expression nodes in order; ``native`` the single
    expression when the source is exactly one ``{{ … }}`` (surrounding whitespace allowed),
    whose value is then returned as is rather than as text.
    """

    source: str
    names: frozenset[str]
    parts: tuple[str | Node, ...] = field(repr=False)
    native: Node | None = field(repr=False)

    def render(self, scope: Mapping[str, Any], ctx: EvalContext) -> Any:
        """The native value of a single expression, else the text with every value written in.

        Raises ``ExpressionError`` (carrying this source) when an expression fails.
        """
        env = Env(scope, ctx)
        try:
            if self.native is not None:
                value = self.native.evaluate(env)
                _pay_to_write(self.native, value, env)  # it goes into the run's bindings next
                return value
            return self._text(env)
        except ExpressionError as exc:
            raise ExpressionError(exc.reason, expression=self.source) from None
        finally:
            if ctx.meter is not None:
                ctx.meter.spent += env.work

    def _text(self, env: Env) -> str:
        """Literal text and written values, joined."""
        pieces = [part if isinstance(part, str) else self._written(part, env)
                  for part in self.parts]
        size = sum(map(len, pieces))
        check_string_size(size)
        env.charge_text(size)
        return "".join(pieces)


    @staticmethod
    def _written(node: Node, env: Env) -> str:
        """One expression's value as text, paid for before it is written."""
        value = node.evaluate(env)
        _pay_to_write(node, value, env)
        return to_text(value)


def _pay_to_write(node: Node, value: Any, env: Env) -> None:
    """Charge the writing out of ``node``'s value: a unit when it is prepaid, else the walk
    of it (:meth:`Env.charge_value`)."""
    if node.prepaid:
        env.charge(1)
    else:
        env.charge_value(value)


_SHIFTS = (FILTERS["plus"], FILTERS["minus"])


def calendars_named(compiled: CompiledTemplate) -> frozenset[str]:
    """The calendars the template's ``plus``/``minus`` filters name as a literal string (a
    name computed by an expression is looked up when it runs)."""
    found: set[str] = set()
    stack: list[Any] = [part for part in compiled.parts if isinstance(part, Node)]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            stack.extend(node)
            continue
        if not isinstance(node, Node):
            continue
        if (isinstance(node, Filter) and node.spec in _SHIFTS and len(node.args) == 2
                and isinstance(node.args[1], Literal) and isinstance(node.args[1].value, str)):
            found.add(node.args[1].value)
        stack.extend(getattr(node, name) for name in getattr(node, "__slots__", ()))
    return frozenset(found)


def is_template(text: str) -> bool:
    """Whether ``text`` holds an expression (contains ``{{``)."""
    return "{{" in text


@functools.lru_cache(maxsize=4096)
def compile_template(source: str) -> CompiledTemplate:
    """Compile ``source`` once (cached); raise ``ExpressionError`` when it is invalid."""
    try:
        return _compile(source)
    except ExpressionError as exc:
        raise ExpressionError(exc.reason, expression=source) from None


def _compile(source: str) -> CompiledTemplate:
    """Parse every expression of ``source``."""
    if len(source) > MAX_SOURCE_CHARS:
        raise ExpressionError(f"template is too long ({len(source):,} characters; the limit "
                              f"is {MAX_SOURCE_CHARS:,})")
    names: set[str] = set()
    parts = tuple(part if isinstance(part, str) else parse_expression(part, names)
                  for part in split_template(source))
    nodes = [part for part in parts if isinstance(part, Node)]
    texts = [part for part in parts if isinstance(part, str)]
    native = nodes[0] if len(nodes) == 1 and not "".join(texts).strip() else None
    return CompiledTemplate(source, frozenset(names), parts, native)


def render(value: Any, scope: Mapping[str, Any], ctx: EvalContext) -> Any:
    """Render every template string inside ``value`` (walking dicts and lists).

    Strings without ``{{`` and values of other types are returned as they are.
    """
    if isinstance(value, str):
        return compile_template(value).render(scope, ctx) if is_template(value) else value
    if isinstance(value, dict):
        return {key: render(item, scope, ctx) for key, item in value.items()}
    if isinstance(value, list):
        return [render(item, scope, ctx) for item in value]
    return value

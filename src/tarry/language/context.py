"""What the loader knows while it reads one flow file: where it is, what names exist.

A :class:`LoadContext` collects every problem found (reading never stops at the first one)
and tracks the names an expression may use at the current point of the file, so that a
template naming an input or step that can never be bound there (``{{ dael.name }}``) is
refused at load with a suggestion, rather than failing hours into a run.

Visible names follow the scope rules of the language: the inputs and ``run`` everywhere
(``now()`` is a function); the ids of steps written earlier in the current and enclosing scopes;
``loop`` inside ``repeat`` and ``for_each`` (plus the ``as`` name of a ``for_each``);
``event`` in ``accept``; ``error`` and every id of the recovered scope in ``recover`` steps.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tarry._suggest import did_you_mean
from tarry.errors import ExpressionError, Problem
from tarry.language.expressions import compile_template, is_template
from tarry.language.expressions.template import calendars_named
from tarry.language.model import Position, Template
from tarry.language.yamlsource import YamlNode, scalars, to_plain

if TYPE_CHECKING:
    from tarry.language.manifests import Manifest

__all__ = ["ALWAYS_VISIBLE", "IDENTIFIER_PATTERN", "RESERVED_NAMES", "LoadContext",
           "unknown_calendar"]


def unknown_calendar(name: str, known: Collection[str]) -> str:
    """The message refusing a flow that names calendar ``name``, not among ``known``."""
    names = sorted(known)
    hint = did_you_mean(name, names) or (
        f" (configured: {', '.join(names)})" if names
        else f" (none is configured: add a [calendars.{name}] table to tarry.toml)")
    return f"unknown calendar '{name}'{hint}"

RESERVED_NAMES = frozenset({"run", "now", "item", "loop", "event", "error", "env"})
"""Names a step id, input or ``as`` name may not take."""

ALWAYS_VISIBLE = frozenset({"run"})
"""Names every expression may use (``now()`` is a function, not a name)."""

IDENTIFIER_PATTERN = "[a-z_][a-z0-9_]*"
_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)

_WHY_UNDEFINED = {
    "item": " ('item' is only defined inside for_each)",
    "loop": " ('loop' is only defined inside repeat and for_each)",
    "event": " ('event' is only defined in 'accept')",
    "error": " ('error' is only defined in recover steps)",
    "now": " (now is a function: write now())",
}


@dataclass(frozen=True)
class LoadContext:
    """The reading position's knowledge; derive a narrower one with :meth:`seeing`.

    ``claimed`` maps names a step id may not take (inputs, ``for_each`` names) to what
    they are, for the message. ``problems`` is shared by every derived context.
    ``manifests``, when given, are the declared event types that ``wait_for`` and ``emit``
    are checked against (None: not checked).
    """

    file: str
    actions: frozenset[str]
    problems: list[Problem] = field(default_factory=list)
    timezone: str | None = None
    visible: frozenset[str] = ALWAYS_VISIBLE
    claimed: Mapping[str, str] = field(default_factory=dict)
    manifests: Mapping[str, Manifest] | None = None
    arguments: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Action name → the JSON Schema of its arguments, for the actions that declare one."""
    calendars: Collection[str] | None = None
    """The configured business calendars a flow may name (None: not checked)."""
    scope_hint: str = ""
    """Appended to "undefined name" when nothing closer explains it (what this part of the
    file may see)."""

    def report(self, pos: Position, message: str) -> None:
        """Record one problem at ``pos``."""
        self.problems.append(Problem(pos.file, pos.line, pos.column, message))

    def seeing(self, names: Iterable[str]) -> LoadContext:
        """This context with ``names`` also visible to expressions."""
        return replace(self, visible=self.visible | frozenset(names))

    def claiming(self, name: str, what: str) -> LoadContext:
        """This context where ``name`` is visible and taken (no step id may reuse it)."""
        return replace(self, visible=self.visible | {name},
                       claimed={**self.claimed, name: what})

    def template(self, text: str, pos: Position) -> Template:
        """``text`` as a :class:`Template`, after checking its syntax and names."""
        self.check_template(text, pos)
        return Template(text)

    def check_template(self, text: str, pos: Position) -> None:
        """Report a syntax error in ``text`` or any name it uses that is not visible here."""
        try:
            compiled = compile_template(text)
        except ExpressionError as exc:
            self.report(pos, f"invalid expression: {exc.reason}")
            return
        for name in sorted(compiled.names - self.visible):
            self.report(pos, f"undefined name '{name}'{self._hint(name)}")
        if self.calendars is not None:
            for name in sorted(calendars_named(compiled) - set(self.calendars)):
                self.report(pos, unknown_calendar(name, self.calendars))

    def value(self, node: YamlNode) -> Any:
        """The plain value of ``node``, every template string in it checked."""
        for scalar in scalars(node):
            if isinstance(scalar.value, str) and is_template(scalar.value):
                self.check_template(scalar.value, scalar.pos)
        return to_plain(node)

    def check_new_name(self, name: str, pos: Position, what: str) -> None:
        """Report ``name`` (a step id or ``as`` name, named ``what``) if it may not be bound.

        It must be an identifier, not reserved, and not shadow an input or loop name.
        """
        if not _IDENTIFIER.fullmatch(name):
            self.report(pos, f"{what} '{name}' must match {IDENTIFIER_PATTERN}")
        elif name in RESERVED_NAMES:
            self.report(pos, f"{what} '{name}' is a reserved name "
                             f"({', '.join(sorted(RESERVED_NAMES))})")
        elif name in self.claimed:
            self.report(pos, f"{what} '{name}' shadows {self.claimed[name]}")

    def _hint(self, name: str) -> str:
        return (_WHY_UNDEFINED.get(name) or did_you_mean(name, self.visible)
                or self.scope_hint)

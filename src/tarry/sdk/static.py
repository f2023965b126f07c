"""What can be checked in a Python flow before it runs, by reading its source (``ast``).

A YAML flow is refused at load for an undeclared event type or a malformed duration; a Python
flow would meet the same mistakes only when its run reaches them, perhaps days later. So
``tarry validate`` and app loading read each flow function's source and check its ``ctx``
calls whose arguments are literals:

- ``ctx.wait_for_event(name, "type", match={...}, timeout="24h")``: the type is declared by a
  manifest (with a suggestion when one is close), the literal ``match`` keys are exactly the
  manifest's ``correlate_on`` keys, and a literal ``timeout`` is a duration;
- ``ctx.wait(name, "2d")``: a literal duration parses;
- ``ctx.patched("new-tax")``, ``ctx.deprecate_patch(...)``: a literal patch id is well formed;
- a literal operation name is not used twice in one block of statements of the flow's own
  scope (a name may repeat in the two arms of an ``if``, or after a branch that returns:
  only one of them runs; telling those apart in general is left to run time).

Anything computed (a variable, an f-string) is left to run time. A function whose source
cannot be read (defined in a REPL, say) is not checked.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tarry._suggest import did_you_mean
from tarry.errors import Problem
from tarry.language.durations import parse_duration
from tarry.language.manifests import Manifest
from tarry.sdk.patches import checked_patch_id

__all__ = ["flow_problems"]

_NAMED_OPERATIONS = frozenset({"step", "wait", "wait_for_event", "wait_for_condition", "now",
                               "random"})
"""The ``ctx`` methods whose first argument is the operation's name."""

_PATCH_CALLS = frozenset({"patched", "deprecate_patch"})
"""The ``ctx`` methods whose first argument is a patch id."""

_Block = int
"""Where a call sits: the identity of the list of statements that holds it."""


@dataclass(frozen=True)
class _Source:
    """A flow function's parsed source and where it sits in its file."""

    tree: ast.AsyncFunctionDef | ast.FunctionDef
    file: str
    first_line: int
    indent: int

    def problem(self, node: ast.AST, message: str) -> Problem:
        """``message`` at ``node``'s position in the file."""
        line = self.first_line + getattr(node, "lineno", 1) - 1
        return Problem(self.file, line, self.indent + getattr(node, "col_offset", 0) + 1,
                       message)


def flow_problems(flow: str, function: Callable[..., Any],
                  manifests: Mapping[str, Manifest] | None) -> list[Problem]:
    """What is wrong in the literal ``ctx`` calls of ``function`` (the flow ``flow``);
    event types are checked only when ``manifests`` is given."""
    source = _read(function)
    if source is None or not source.tree.args.args:
        return []
    ctx = source.tree.args.args[0].arg
    calls = list(_ctx_calls(source.tree.body, ctx))
    problems = [problem for call, _ in calls
                for problem in _call_problems(source, flow, call, manifests)]
    return sorted(problems + _repeated_names(source, flow, calls),
                  key=lambda p: (p.line, p.column))


def _read(function: Callable[..., Any]) -> _Source | None:
    try:
        lines, first_line = inspect.getsourcelines(function)
        file = inspect.getsourcefile(function) or "<unknown>"
    except (OSError, TypeError):
        return None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(text) - len(text.lstrip()) - (len(dedented) - len(dedented.lstrip()))
    try:
        module = ast.parse(dedented)
    except SyntaxError:
        return None
    tree = next((node for node in module.body
                 if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef)), None)
    return None if tree is None else _Source(tree, file, first_line, indent)


def _ctx_calls(body: list[ast.stmt], ctx: str) -> Iterator[tuple[ast.Call, _Block]]:
    """Every ``ctx.<operation>(...)`` call in ``body`` with the block it sits in; nested
    functions (branches of ``parallel``/``map``, with contexts of their own) are not entered."""
    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        blocks = [name for name in _BLOCKS if isinstance(getattr(statement, name, None), list)]
        for name, value in ast.iter_fields(statement):
            if name not in blocks:
                yield from _expression_calls(value, ctx, id(body))
        for name in blocks:
            for part in getattr(statement, name):
                if isinstance(part, ast.ExceptHandler):
                    yield from _ctx_calls(part.body, ctx)
            statements = [part for part in getattr(statement, name)
                          if not isinstance(part, ast.ExceptHandler)]
            yield from _ctx_calls(statements, ctx)


_BLOCKS = ("body", "orelse", "finalbody", "handlers")
"""The fields of a compound statement that hold statements."""


def _expression_calls(value: Any, ctx: str, block: _Block) -> Iterator[tuple[ast.Call, _Block]]:
    for node in value if isinstance(value, list) else [value]:
        if not isinstance(node, ast.AST):
            continue
        for found in ast.walk(node):
            if (isinstance(found, ast.Call) and isinstance(found.func, ast.Attribute)
                    and isinstance(found.func.value, ast.Name) and found.func.value.id == ctx
                    and found.func.attr in _NAMED_OPERATIONS | _PATCH_CALLS):
                yield found, block


def _literal(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _call_problems(source: _Source, flow: str, call: ast.Call,
                   manifests: Mapping[str, Manifest] | None) -> list[Problem]:
    assert isinstance(call.func, ast.Attribute)
    where = f"flow '{flow}': ctx.{call.func.attr}"
    if call.func.attr in _PATCH_CALLS:
        return _patch_problems(source, where, call)
    problems = []
    durations = {"wait": call.args[1] if len(call.args) > 1 else None,
                 "wait_for_event": _keyword(call, "timeout")}
    duration = durations.get(call.func.attr)
    text = _literal(duration)
    if duration is not None and text is not None and not _is_instant(text):
        try:
            parse_duration(text)
        except ValueError as exc:
            problems.append(source.problem(duration, f"{where}: {exc}"))
    if call.func.attr == "wait_for_event" and manifests is not None and len(call.args) > 1:
        problems += _event_problems(source, where, call, manifests)
    return problems


def _patch_problems(source: _Source, where: str, call: ast.Call) -> list[Problem]:
    patch_id = _literal(call.args[0]) if call.args else None
    if patch_id is None:
        return []
    try:
        checked_patch_id(patch_id, "")
    except ValueError as exc:
        return [source.problem(call.args[0], f"{where}{exc}")]
    return []


def _is_instant(text: str) -> bool:
    return len(text) >= 10 and text[4] == "-" and text[:4].isdigit()


def _event_problems(source: _Source, where: str, call: ast.Call,
                    manifests: Mapping[str, Manifest]) -> list[Problem]:
    event_type = _literal(call.args[1])
    if event_type is None:
        return []
    manifest = manifests.get(event_type)
    if manifest is None:
        return [source.problem(call.args[1], (
            f"{where}: unknown event type '{event_type}'{did_you_mean(event_type, manifests)}; "
            "declare it in an event manifest (events.yaml)"))]
    match = _keyword(call, "match")
    if not isinstance(match, ast.Dict) or not all(_literal(k) for k in match.keys):
        return []
    given = {_literal(key) for key in match.keys}
    if given == set(manifest.correlate_on):
        return []
    expected = ", ".join(manifest.correlate_on)
    return [source.problem(match, f"{where}: match must give exactly the correlate_on keys "
                                  f"of '{event_type}' ({expected}), got "
                                  f"{', '.join(sorted(str(g) for g in given)) or 'none'}")]


def _repeated_names(source: _Source, flow: str,
                    calls: list[tuple[ast.Call, _Block]]) -> list[Problem]:
    seen: set[tuple[str, _Block]] = set()
    problems = []
    for call, block in calls:
        assert isinstance(call.func, ast.Attribute)
        if call.func.attr in _PATCH_CALLS:  # an id asked for again gets the same answer
            continue
        name = _literal(call.args[0]) if call.args else None
        if name is None:
            continue
        if (name, block) in seen:
            problems.append(source.problem(call.args[0], (
                f"flow '{flow}': operation name '{name}' is used twice; each operation of a "
                "flow needs a name of its own")))
        seen.add((name, block))
    return problems

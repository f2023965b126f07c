"""Reading a flow's ``concurrency:``: at most ``limit`` runs per rendered ``key`` past their
start and not ended (the runs beyond wait for a slot, first come, first served)."""

from __future__ import annotations

from dataclasses import replace

from tarry.language.context import LoadContext
from tarry.language.fields import Fields, holds_template, read_mapping, read_positive_int
from tarry.language.model import Concurrency, Template
from tarry.language.yamlsource import YamlNode, YamlScalar, describe

__all__ = ["CONCURRENCY_NAMES", "read_concurrency"]

CONCURRENCY_NAMES = ("run", "target")
"""What a concurrency key may name besides the flow's inputs: the run (its id, its target)
and the run's ``target``; no step has run when the key is rendered."""

_SCOPE_HINT = " (a concurrency key may name the flow's inputs, run and target)"


def read_concurrency(ctx: LoadContext, node: YamlNode, key: str) -> Concurrency | None:
    """``concurrency: {key?, limit}``; ``ctx`` sees the flow's inputs."""
    mapping = read_mapping(ctx, node, key, ' such as { key: "{{ target }}", limit: 1 }')
    if mapping is None:
        return None
    fields = Fields(ctx, mapping, "in 'concurrency'", allowed=("key", "limit"),
                    required={"limit": " (how many runs per key at once)"})
    keyed = replace(ctx.seeing(CONCURRENCY_NAMES), scope_hint=_SCOPE_HINT)
    return Concurrency(key=fields.read("key", lambda _, value, name: _read_key(
                           keyed, value, name), None),
                       limit=fields.read("limit", read_positive_int, 1), pos=mapping.pos)


def _read_key(ctx: LoadContext, node: YamlNode, key: str) -> Template | str | None:
    """The key: a template, or a literal string (one key for every run)."""
    if holds_template(node):
        return ctx.template(str(node.value), node.pos)
    if isinstance(node, YamlScalar) and isinstance(node.value, str) and node.value:
        return node.value
    ctx.report(node.pos, f"'{key}' must be a string, usually one {{{{ … }}}} expression such "
                         f"as \"{{{{ target }}}}\", got {describe(node)}")
    return None

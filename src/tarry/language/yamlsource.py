"""YAML 1.2 text into a tree of nodes that remember where they were written.

The loader needs a position for every mapping key, mapping value and sequence item, so this
module composes the YAML node graph (which carries marks) and builds its own small tree from
it instead of using constructed Python objects:

- YAML 1.2 scalars: ``on``, ``yes`` and ``no`` are strings, only ``true``/``false`` are
  booleans.
- Date-like scalars stay text: instants are parsed later by tarry's own strict rules
  (a zone-less or impossible date is a load error, not a silent ``datetime``).
- Duplicate keys, non-string keys, merge keys (``<<``), unsupported tags and recursive
  aliases are reported as problems; the rest of the tree is still built so that the loader
  can report everything in one pass.
- Bounded before anything is built: a document nested deeper than :data:`MAX_DEPTH`
  collections, or whose aliases (``*name``) would expand to more than
  :data:`MAX_ALIAS_NODES` nodes in all (the "billion laughs"), is refused from one linear
  pass over the parser's events, so neither the recursive composer nor any reader of the
  tree can run out of stack or memory. The same pass refuses an anchor defined twice.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeAlias

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    Event,
    NodeEvent,
)
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from tarry._text import clip
from tarry.errors import Problem
from tarry.language.model import Position
from tarry.values import MAX_DEPTH, MAX_INTEGER_DIGITS

__all__ = [
    "MAX_ALIAS_NODES",
    "MAX_DEPTH",
    "YamlEntry",
    "YamlMap",
    "YamlNode",
    "YamlScalar",
    "YamlSeq",
    "describe",
    "describe_value",
    "read_yaml",
    "scalars",
    "to_plain",
]

Scalar: TypeAlias = str | int | float | bool | None

MAX_ALIAS_NODES = 10_000
"""How many nodes the aliases of one YAML file may expand to, all aliases together."""


@dataclass(frozen=True, eq=False)
class YamlScalar:
    """A scalar value (string, number, boolean or null) and where it was written."""

    value: Scalar
    pos: Position


@dataclass(frozen=True, eq=False)
class YamlEntry:
    """One ``key: value`` pair of a mapping, with the key's own position."""

    key: str
    key_pos: Position
    value: YamlNode


@dataclass(frozen=True, eq=False)
class YamlMap:
    """A mapping: its entries in file order (keys unique, all strings)."""

    entries: tuple[YamlEntry, ...]
    pos: Position

    def get(self, key: str) -> YamlEntry | None:
        """The entry for ``key``, or None."""
        return next((entry for entry in self.entries if entry.key == key), None)

    def key_list(self) -> list[str]:
        """The keys in file order."""
        return [entry.key for entry in self.entries]


@dataclass(frozen=True, eq=False)
class YamlSeq:
    """A sequence: its items in file order."""

    items: tuple[YamlNode, ...]
    pos: Position


YamlNode: TypeAlias = YamlScalar | YamlMap | YamlSeq

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
_CONSTRUCTED = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
_AS_TEXT = {_STR, "tag:yaml.org,2002:timestamp"}
_NULL = "tag:yaml.org,2002:null"


def read_yaml(text: str, file: str) -> tuple[YamlNode | None, list[Problem]]:
    """Parse one YAML document; return its tree (None when empty or unreadable) and problems."""
    yaml = YAML(typ="safe", pure=True)
    try:
        refused = _beyond_bounds(yaml.parse(text), file)
        if refused is not None:
            return None, [refused]
        root = yaml.compose(text)
    except MarkedYAMLError as exc:
        return None, [_syntax_problem(exc, file)]
    except YAMLError as exc:
        return None, [Problem(file, 1, 1, f"invalid YAML: {exc}")]
    if root is None:
        return None, []
    builder = _TreeBuilder(file, yaml.constructor.construct_object)
    return builder.build(root), builder.problems


def to_plain(node: YamlNode) -> Any:
    """The plain Python value of ``node``: dicts, lists, str, int, float, bool and None."""
    if isinstance(node, YamlMap):
        return {entry.key: to_plain(entry.value) for entry in node.entries}
    if isinstance(node, YamlSeq):
        return [to_plain(item) for item in node.items]
    return node.value


def scalars(node: YamlNode) -> Iterator[YamlScalar]:
    """Every scalar inside ``node`` (``node`` itself when it is one), in file order."""
    if isinstance(node, YamlMap):
        for entry in node.entries:
            yield from scalars(entry.value)
    elif isinstance(node, YamlSeq):
        for item in node.items:
            yield from scalars(item)
    else:
        yield node


def describe(node: YamlNode) -> str:
    """A short rendering of a node for messages: ``'text'``, ``3``, ``true``, ``a list``."""
    if isinstance(node, YamlMap):
        return "a mapping"
    if isinstance(node, YamlSeq):
        return "a list"
    return describe_value(node.value)


def describe_value(value: Any) -> str:
    """A short rendering of a plain value for messages, in YAML's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"'{clip(value, 80)}'"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return str(value)


def _syntax_problem(exc: MarkedYAMLError, file: str) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    context = f" ({exc.context})" if exc.context else ""
    return Problem(file, line, column, f"invalid YAML: {exc.problem}{context}")


def _beyond_bounds(events: Iterator[Event], file: str) -> Problem | None:
    """The first place where the document nests deeper than :data:`MAX_DEPTH`, its aliases
    expand beyond :data:`MAX_ALIAS_NODES` nodes, or an anchor is defined twice; None when
    none of these happens.

    One pass, constant work per event: the expanded size of every anchored node is known when
    it ends, and an alias costs the size of the node it names.
    """
    open_nodes: list[_OpenNode] = [_OpenNode(None)]  # the open collections, outermost first
    anchored: dict[str, int] = {}
    first_lines: dict[str, int] = {}
    expanded = 0
    for event in events:
        reused = _reused_anchor(event, first_lines, file)
        if reused is not None:
            return reused
        if isinstance(event, CollectionStartEvent):
            if len(open_nodes) > MAX_DEPTH:
                return _problem_at(event, file, f"the YAML nests deeper than {MAX_DEPTH} "
                                                "levels of mappings and lists")
            open_nodes.append(_OpenNode(event.anchor))
            continue
        if isinstance(event, CollectionEndEvent):
            node = open_nodes.pop()
        elif isinstance(event, AliasEvent):
            node = _OpenNode(None, anchored.get(str(event.anchor), 1))
            expanded += node.size
            if expanded > MAX_ALIAS_NODES:
                return _problem_at(event, file, f"the YAML aliases expand to more than "
                                                f"{MAX_ALIAS_NODES:,} nodes; write the values "
                                                "out or share less through aliases")
        elif isinstance(event, NodeEvent):
            node = _OpenNode(event.anchor)
        else:
            continue
        if node.anchor is not None:
            anchored[str(node.anchor)] = node.size
        open_nodes[-1].size += node.size
    return None


def _reused_anchor(event: Event, first: dict[str, int], file: str) -> Problem | None:
    """A problem when ``event`` defines an anchor (``&name``) a second time (an alias after
    it would name another value than the one written first); ``first`` maps each anchor seen
    so far to its line."""
    anchor = getattr(event, "anchor", None)
    if anchor is None or isinstance(event, AliasEvent):
        return None
    if str(anchor) in first:
        return _problem_at(event, file, f"the anchor '&{anchor}' is defined twice (first at "
                                        f"line {first[str(anchor)]}); give each anchor its "
                                        "own name")
    first[str(anchor)] = event.start_mark.line + 1
    return None


@dataclass(eq=False)
class _OpenNode:
    """A node being counted: its anchor (if any) and its expanded size so far."""

    anchor: object
    size: int = 1


def _problem_at(event: Event, file: str, message: str) -> Problem:
    mark = event.start_mark
    return Problem(file, mark.line + 1, mark.column + 1, message)



def _short(tag: str) -> str:
    """``!!int`` for ``tag:yaml.org,2002:int``; other tags as written."""
    return tag.replace("tag:yaml.org,2002:", "!!")


class _TreeBuilder:
    """Turns a composed YAML node graph into positioned nodes, collecting problems."""

    def __init__(self, file: str, construct: Callable[[Node], Any]) -> None:
        self.file = file
        self.problems: list[Problem] = []
        self._construct = construct
        self._built: dict[int, YamlNode] = {}
        self._open: set[int] = set()

    def build(self, node: Node) -> YamlNode:
        """The tree for ``node``; an alias to an already built node shares its subtree."""
        key = id(node)
        if key in self._built:
            return self._built[key]
        pos = self._pos(node)
        if key in self._open:
            self._report(pos, "an alias refers to a node that contains it (recursive alias)")
            return YamlScalar(None, pos)
        self._open.add(key)
        built = self._build_any(node, pos)
        self._open.discard(key)
        self._built[key] = built
        return built

    def _build_any(self, node: Node, pos: Position) -> YamlNode:
        if isinstance(node, MappingNode) and node.tag == _MAP:
            return self._mapping(node, pos)
        if isinstance(node, SequenceNode) and node.tag == _SEQ:
            return YamlSeq(tuple(self.build(item) for item in node.value), pos)
        if isinstance(node, ScalarNode):
            return YamlScalar(self._scalar(node, pos), pos)
        self._report(pos, f"unsupported YAML tag '{_short(str(node.tag))}'")
        return YamlScalar(None, pos)

    def _mapping(self, node: MappingNode, pos: Position) -> YamlMap:
        entries: dict[str, YamlEntry] = {}
        for key_node, value_node in node.value:
            key_pos = self._pos(key_node)
            key = self._key(key_node, key_pos)
            if key is None:
                continue
            if key in entries:
                first = entries[key].key_pos.line
                self._report(key_pos, f"duplicate key '{key}' (first at line {first})")
                continue
            entries[key] = YamlEntry(key, key_pos, self._value(value_node, key_pos))
        return YamlMap(tuple(entries.values()), pos)

    def _value(self, node: Node, key_pos: Position) -> YamlNode:
        """The value of a key; an empty value (``key:`` and nothing) is placed at its key."""
        if isinstance(node, ScalarNode) and node.tag == _NULL and node.value == "":
            return YamlScalar(None, key_pos)
        return self.build(node)

    def _key(self, node: Node, pos: Position) -> str | None:
        if node.tag == _MERGE:
            self._report(pos, "merge keys ('<<') are not supported; write the keys out")
            return None
        key = self.build(node)
        if isinstance(key, YamlScalar) and isinstance(key.value, str):
            return key.value
        self._report(pos, f"a mapping key must be a string, got {describe(key)}")
        return None

    def _scalar(self, node: ScalarNode, pos: Position) -> Scalar:
        tag = node.tag
        if tag in _AS_TEXT:
            return str(node.value)
        if tag == _NULL:
            return None
        if tag in _CONSTRUCTED:
            return self._constructed(node, pos)
        self._report(pos, f"unsupported YAML tag '{_short(str(tag))}'")
        return None

    def _constructed(self, node: ScalarNode, pos: Position) -> Scalar:
        """A boolean or number; one JSON cannot hold (infinite, NaN, too long) is refused."""
        written = clip(str(node.value))
        if len(str(node.value)) > MAX_INTEGER_DIGITS:
            self._report(pos, f"the number '{written}' is longer than {MAX_INTEGER_DIGITS} "
                              "digits")
            return None
        try:
            value: Scalar = self._construct(node)
        except (YAMLError, ValueError, ArithmeticError, LookupError):  # '!!int ""' and kin
            self._report(pos, f"'{written}' is not a valid {_short(str(node.tag))}")
            return None
        if isinstance(value, float) and not math.isfinite(value):
            self._report(pos, f"the number '{written}' is not finite; JSON holds no "
                              "infinity or NaN")
            return None
        return value

    def _pos(self, node: Node) -> Position:
        return Position(self.file, node.start_mark.line + 1, node.start_mark.column + 1)

    def _report(self, pos: Position, message: str) -> None:
        self.problems.append(Problem(pos.file, pos.line, pos.column, message))

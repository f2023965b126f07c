"""The expression parser, loaded from tables generated from ``grammar.lark`` and kept beside it.

Lark's LALR analysis of the grammar takes about 60 ms, which the first expression a process
compiles (its first start) used to pay. ``grammar.tables.json`` holds what that analysis
produces — Lark's own serialisation of the parser, as JSON — with the SHA-256 of the grammar
and the Lark version it came from. :func:`expression_parser` loads it (a few milliseconds)
only when both match the grammar and the Lark at hand, and otherwise builds the parser from
the grammar as before: a stale file costs time, never a wrong parse, and nothing is read
from or written to a cache outside the package. A test keeps the file current; after editing
the grammar or upgrading Lark, regenerate it with::

    .venv/bin/python scripts/expression_tables.py
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import lark
from lark import Lark
from lark.grammar import Rule
from lark.lexer import TerminalDef

__all__ = ["TABLES_FILE", "build_parser", "expression_parser", "grammar_text", "loaded_parser",
           "render_tables", "write_tables"]

_HERE = resources.files("tarry.language.expressions")
_GRAMMAR = "grammar.lark"
_TABLES = "grammar.tables.json"
TABLES_FILE = _HERE.joinpath(_TABLES)
"""The generated tables, beside the grammar in the package."""
_SHIFT = 0
"""The action of a shift in Lark's serialised table (a reduce is 1)."""

_Serialised = tuple[dict[str, Any], dict[int, Any]]
"""What ``Lark.memo_serialize`` returns and ``Lark.load`` takes: the parser and its memo."""


def expression_parser() -> Lark:
    """The parser of ``grammar.lark``: from the generated tables when they are current,
    else built from the grammar."""
    grammar = grammar_text()
    return loaded_parser(grammar, TABLES_FILE) or build_parser(grammar)


def build_parser(grammar: str) -> Lark:
    """The LALR parser of ``grammar``, analysed now (what the tables spare)."""
    return Lark(grammar, parser="lalr", propagate_positions=True)


def render_tables(grammar: str) -> str:
    """The text of the tables file for ``grammar`` with the Lark at hand."""
    data, memo = build_parser(grammar).memo_serialize([TerminalDef, Rule])
    data["parser"]["parser"] = _numbered_in_order(data["parser"]["parser"])
    tables = {"grammar_sha256": _digest(grammar), "lark": lark.__version__,
              **_as_json(data, memo)}
    text = json.dumps(tables, indent=0, separators=(",", ":")) + "\n"
    if _from_json(json.loads(text)) != (data, memo):
        raise ValueError(f"Lark {lark.__version__} serialises its parser in a form "
                         f"{_TABLES} does not hold")
    return text


def write_tables() -> Path:
    """Write the tables file for the grammar beside it (in a source checkout); its path."""
    target = Path(__file__).with_name(_TABLES)
    target.write_text(render_tables(grammar_text()), encoding="utf-8")
    return target


def loaded_parser(grammar: str, tables_file: Traversable) -> Lark | None:
    """The parser in ``tables_file`` if it was generated from ``grammar`` by this Lark."""
    try:
        tables = json.loads(tables_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    if (tables["grammar_sha256"], tables["lark"]) != (_digest(grammar), lark.__version__):
        return None
    data, memo = _from_json(tables)
    return Lark.load({"data": data, "memo": memo})


def grammar_text() -> str:
    """The expression grammar (``grammar.lark``)."""
    return _HERE.joinpath(_GRAMMAR).read_text(encoding="utf-8")


def _digest(grammar: str) -> str:
    return hashlib.sha256(grammar.encode("utf-8")).hexdigest()


def _numbered_in_order(table: dict[str, Any]) -> dict[str, Any]:
    """Lark's serialised LALR table (``tokens``: number → name; ``states``: state → token
    number → ``(0, next state)`` to shift, ``(1, rule)`` to reduce) with its tokens numbered
    by name and its states in the order met from the start states, actions in token order.
    Lark numbers both in the order of its sets, which changes from run to run; this order
    makes the file the same for the same grammar and Lark."""
    names: dict[int, str] = table["tokens"]
    states: dict[int, dict[int, tuple[int, Any]]] = table["states"]
    token_of = {name: number for number, name in enumerate(sorted(names.values()))}

    def actions(state: int) -> list[tuple[int, tuple[int, Any]]]:
        return sorted(states[state].items(), key=lambda item: names[item[0]])

    order: list[int] = []
    pending = deque(table["start_states"][start] for start in sorted(table["start_states"]))
    while pending:
        state = pending.popleft()
        if state not in order:
            order.append(state)
            pending.extend(target for _, (action, target) in actions(state)
                           if action == _SHIFT)
    if len(order) != len(states):
        raise ValueError(f"{len(states) - len(order)} parser states are never reached")
    state_of = {state: number for number, state in enumerate(order)}
    return {"tokens": {number: name for name, number in token_of.items()},
            "states": {state_of[state]: {
                token_of[names[token]]: (action, state_of[target] if action == _SHIFT
                                         else target)
                for token, (action, target) in actions(state)} for state in order},
            "start_states": {start: state_of[state]
                             for start, state in table["start_states"].items()},
            "end_states": {start: state_of[state]
                           for start, state in table["end_states"].items()}}


def _as_json(data: dict[str, Any], memo: dict[int, Any]) -> dict[str, Any]:
    """The serialised parser with what JSON has no type for spelled as lists: the table's
    tokens (by number) and states (by number, each a list of ``[token, action, argument]``)
    and the memo (by number). The rest is plain JSON but for the rules' ``empty_indices``
    (tuples, lists here)."""
    table = data["parser"]["parser"]
    plain_table = {**table, "tokens": [table["tokens"][number] for number in
                                       range(len(table["tokens"]))],
                   "states": [[[token, action, argument]
                               for token, (action, argument) in table["states"][number].items()]
                              for number in range(len(table["states"]))]}
    plain_data = {**data, "parser": {**data["parser"], "parser": plain_table}}
    return {"data": plain_data, "memo": [memo[number] for number in range(len(memo))]}


def _from_json(tables: dict[str, Any]) -> _Serialised:
    """The inverse of :func:`_as_json` (the JSON's objects are reused)."""
    data, table = tables["data"], tables["data"]["parser"]["parser"]
    table["tokens"] = dict(enumerate(table["tokens"]))
    table["states"] = {number: {token: (action, argument) for token, action, argument in state}
                       for number, state in enumerate(table["states"])}
    memo = dict(enumerate(tables["memo"]))
    for entry in memo.values():
        options = entry.get("options")
        if options is not None and "empty_indices" in options:
            options["empty_indices"] = tuple(options["empty_indices"])
    return data, memo

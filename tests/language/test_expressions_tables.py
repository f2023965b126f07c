"""The expression parser's generated tables: current, used only when current, and parsing as
the parser built from the grammar does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lark import Lark
from lark.exceptions import UnexpectedInput

from tarry.language.expressions.tables import (
    TABLES_FILE,
    build_parser,
    expression_parser,
    grammar_text,
    loaded_parser,
    render_tables,
)

EXPRESSIONS = [
    "a.b | upper + 'x' ~ 2",
    "a.b | default(1, 'two') + 2 * -3 % 4 / 5 - 6",
    "x == 1 or y != 2 and not z in [1, 2,] and w not in {'k': v, 'j': [],}",
    "item is defined and item is not defined or a <= b >= c < d > e",
    "f() + g(1, x[0]['k'].y,) + 1.5e3 + 1d2h + 30s + true + false + null + {}",
    "((((a))))",
    "'unclosed",
    "a +",
    "a b",
    "1 2",
    "| x",
    "x |",
    "[1, 2",
    "{'a' 1}",
    "a..b",
    "#",
]
"""Expressions that parse and expressions that do not, each kind of error."""


def _parsed(parser: Lark, expression: str) -> object:
    """The tree of ``expression``, or the kind and place of its syntax error."""
    try:
        return parser.parse(expression)
    except UnexpectedInput as exc:
        return type(exc).__name__, exc.line, exc.column, str(getattr(exc, "token", ""))


def _tables_in(tmp_path: Path, **changes: str) -> Path:
    tables = json.loads(TABLES_FILE.read_text(encoding="utf-8"))
    path = tmp_path / "grammar.tables.json"
    path.write_text(json.dumps({**tables, **changes}), encoding="utf-8")
    return path


def test_the_tables_file_is_current() -> None:
    expected = render_tables(grammar_text())
    assert TABLES_FILE.read_text(encoding="utf-8") == expected, (
        "grammar.tables.json is stale: regenerate it with "
        ".venv/bin/python scripts/expression_tables.py")


def test_the_parser_in_use_is_loaded_from_the_tables() -> None:
    assert build_parser(grammar_text()).source_path == "<string>"
    assert expression_parser().source_path == "<deserialized>"


def test_the_loaded_parser_parses_as_the_built_one() -> None:
    loaded, built = loaded_parser(grammar_text(), TABLES_FILE), build_parser(grammar_text())
    assert loaded is not None
    for expression in EXPRESSIONS:
        assert _parsed(loaded, expression) == _parsed(built, expression), expression


@pytest.mark.parametrize("changes", [
    {"grammar_sha256": "0" * 64},
    {"lark": "0.0.1"},
])
def test_tables_of_another_grammar_or_lark_are_not_used(
        tmp_path: Path, changes: dict[str, str]) -> None:
    assert loaded_parser(grammar_text(), _tables_in(tmp_path)) is not None
    assert loaded_parser(grammar_text(), _tables_in(tmp_path, **changes)) is None


def test_without_a_tables_file_the_parser_is_built(tmp_path: Path) -> None:
    assert loaded_parser(grammar_text(), tmp_path / "grammar.tables.json") is None

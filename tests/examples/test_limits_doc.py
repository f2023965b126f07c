"""docs/limits.md: every limit it lists is the one the code applies, with the default, the
setting and the message the page quotes."""

from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType

import pytest

from tarry.config import CHECK_BASE_ENV, Limits
from tarry.errors import LoadError
from tarry.language.durations import MAX_DURATION, parse_duration
from tarry.language.expressions import limits as expression_limits
from tarry.language.loader import parse_flow
from tarry.language.yamlsource import MAX_ALIAS_NODES
from tarry.secrets import MIN_SECRET_LENGTH
from tarry.values import MAX_DEPTH, MAX_INTEGER_DIGITS, TEXT_CHARS, ValueLimits

DOC = (Path(__file__).resolve().parents[2] / "docs" / "limits.md").read_text(encoding="utf-8")
SETTABLE = DOC.split("## Settable limits", 1)[1].split("\n## ", 1)[0]
ROWS = re.findall(r"^\| `(\w+)` \| `(\w+)` \| `?([^`|]+?)`?(?: \([^)]*\))? \|", SETTABLE,
                  re.MULTILINE)


def test_the_page_lists_every_setting_of_the_limits_table() -> None:
    documented = {name for name, _, _ in ROWS}
    assert documented == set(Limits.__dataclass_fields__) | set(ValueLimits.__dataclass_fields__)


_READ_DEFAULT = {int: int, tuple: lambda text: () if text == "none" else (text,),
                 MappingProxyType: lambda text: {} if text == "none" else None}
"""How the page spells a default of each type (durations otherwise)."""


@pytest.mark.parametrize(("name", "variable", "default"), ROWS)
def test_each_setting_has_its_variable_and_default(name: str, variable: str,
                                                   default: str) -> None:
    assert variable == f"TARRY_{name.upper()}"
    code = getattr(Limits(), name, None)
    if code is None:
        code = getattr(ValueLimits(), name)
    read = _READ_DEFAULT.get(type(code), parse_duration)
    assert read(default) == code


def test_the_fixed_numbers_are_the_codes() -> None:
    assert (MAX_DEPTH, MAX_INTEGER_DIGITS, MAX_ALIAS_NODES) == (64, 4_000, 10_000)
    assert MAX_DURATION == parse_duration("36525d") == parse_duration("5217w6d")
    assert (expression_limits.MAX_SOURCE_CHARS, expression_limits.MAX_DEPTH,
            expression_limits.MAX_STRING_CHARS, expression_limits.MAX_LIST_ITEMS,
            expression_limits.MAX_INT_BITS, expression_limits.MAX_WORK) == (
        10_000, 50, 1_000_000, 100_000, 4096, 1_000_000)
    assert MIN_SECRET_LENGTH == 4
    assert f"**{TEXT_CHARS:,} characters**" in DOC
    assert ", ".join(f"`{name}`" for name in CHECK_BASE_ENV) in DOC.replace(" and ", ", ")


@pytest.mark.parametrize("source", [
    "flow: f\nsteps: " + "[" * 100 + "]" * 100 + "\n",
    "flow: f\nsteps:\n  - a: { set: { v: [" + ", ".join(
        ["&l0 [x, x, x, x, x, x, x, x, x]"]
        + [f"&l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, 9)]) + "] } }\n",
    "flow: f\nsteps: [{a: {set: {x: &v 1, y: &v 2, z: *v}}}]\n",
    "flow: f\nsteps:\n  - a: { set: { v: 1e400 } }\n",
    "flow: f\nsteps:\n  - a: { wait: { for: P99999999999W } }\n",
])
def test_each_quoted_load_message_is_the_loaders(source: str) -> None:
    with pytest.raises(LoadError) as caught:
        parse_flow(source, "x.yaml")
    assert f"`{caught.value.problems[0].message}`" in re.sub(r"\s+", " ", DOC)

"""JSON text from users (``--data``, ``--inputs``, ``-i name=value``) into plain values, bounded.

The standard library's reader accepts what no store can keep (``NaN``, ``Infinity``) and fails
with other than a ``ValueError`` on hostile input (a ``RecursionError`` for deep nesting). This
reader refuses all of it with one kind of error, ``ValueError``, whose message says why:

- nesting deeper than :data:`~tarry.values.MAX_DEPTH` arrays and objects (the same
  bound as YAML files), checked in one pass before parsing;
- a number longer than :data:`~tarry.values.MAX_INTEGER_DIGITS` digits;
- ``NaN``, ``Infinity`` and ``-Infinity``, and numbers too large to be finite.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from tarry._text import clip
from tarry.values import MAX_DEPTH, MAX_INTEGER_DIGITS

__all__ = ["json_reason", "parse_json"]

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def parse_json(text: str) -> Any:
    """The value of the JSON document ``text``; ``ValueError`` (a ``json.JSONDecodeError``
    when it is not JSON at all) with the reason when it is not JSON or breaks the bounds."""
    _check_depth(text)
    return json.loads(text, parse_constant=_refuse_constant, parse_int=_int,
                      parse_float=_float)


def json_reason(error: ValueError) -> str:
    """Why :func:`parse_json` refused a text, in words: ``Expecting ',' delimiter (line 3,
    column 5)`` for text that is not JSON, else the bound it breaks."""
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} (line {error.lineno}, column {error.colno})"
    return str(error)


def _check_depth(text: str) -> None:
    depth = 0
    for bracket in _BRACKET.findall(_STRING.sub('""', text)):
        depth += _DEPTH_STEP[bracket]
        if depth > MAX_DEPTH:
            raise ValueError(f"nested deeper than {MAX_DEPTH} levels of arrays and objects")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"'{name}' is not a JSON number (JSON has no NaN or infinity)")


def _int(digits: str) -> int:
    _check_length(digits)
    return int(digits)


def _float(digits: str) -> float:
    _check_length(digits)
    value = float(digits)
    if not math.isfinite(value):
        raise ValueError(f"the number '{clip(digits)}' is too large to be finite")
    return value


def _check_length(digits: str) -> None:
    if len(digits) > MAX_INTEGER_DIGITS:
        raise ValueError(f"the number '{clip(digits)}' is longer than {MAX_INTEGER_DIGITS} "
                         "digits")


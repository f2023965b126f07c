"""Portable values: the one check every value passes before it reaches a store.

SQLite keeps almost anything as text; PostgreSQL refuses a NUL character, a lone surrogate or
an oversized index entry. So that both stores behave the same and no store ever sees a value
it may refuse, every value crossing into the store is checked here first, at the edge where it
enters: event payloads and ids (``tarry send``, the API, ``emit``, redelivery), correlation
values (of events and of waits), run inputs and targets, step results (action results and
bindings), and what Python flows record.

A portable value is JSON data — ``dict`` with ``str`` keys, ``list`` (or ``tuple``), ``str``,
``int``, ``float``, ``bool``, ``None`` — with

- no NaN or infinity;
- no NUL character (``\\u0000``) and no lone surrogate in any string or key (so every string
  is valid UTF-8);
- at most :data:`MAX_DEPTH` levels of nested arrays and objects and integers of at most
  :data:`MAX_INTEGER_DIGITS` digits (the bounds the loaders apply to files);
- a size, as compact UTF-8 JSON, within a limit of :class:`ValueLimits`: ``event_bytes`` for
  an event's payload, ``value_bytes`` for any other value, ``key_bytes`` for an event id, a
  run target and each correlation value.

A number is kept as its value, not as its spelling: PostgreSQL's ``jsonb`` writes a whole
number without an exponent and has no negative zero, so a float such as ``1e+20`` comes back
from it as the integer ``100000000000000000000`` and ``-0.0`` as ``0.0``. Every stored value is
read with :func:`load_json`, which reads SQLite's text the same way, so that a run sees the
same values on either store. (An object's keys may come back in another order from
PostgreSQL, which keeps them shortest first: JSON objects have no order.)

What the user sees: an event that breaks a rule is refused before anything is stored
(:class:`InvalidValue`, or :class:`ValueTooLarge` for a size; ``tarry send`` exits 1 with the
message, the API answers 422 or 413); a step whose result breaks one fails with
``error.type = value`` and the same message, once, and never stalls its run or another.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from tarry._text import clip
from tarry.errors import InvalidValue, ValueTooLarge

__all__ = ["MAX_DEPTH", "MAX_INTEGER_DIGITS", "MIB", "TEXT_CHARS", "ValueLimits", "bounded_texts",
           "check_key", "check_path_segment", "check_value", "json_size", "load_json",
           "printable", "stored_text"]

MAX_DEPTH = 64
"""The deepest nesting of arrays and objects a stored value may have."""

MAX_INTEGER_DIGITS = 4_000
"""The longest integer a stored value may hold (Python converts at most 4,300 digits)."""

MIB = 1_048_576
"""One mebibyte, the default of the size limits."""

TEXT_CHARS = 16_384
"""The longest text the engine stores about a run: an error's message, a log line, a reason,
a check's output, any text in a history entry. A longer one is cut, with a marker."""


@dataclass(frozen=True)
class ValueLimits:
    """The size limits of stored values (``[limits]`` in ``tarry.toml``)."""

    event_bytes: int = MIB
    """The largest event payload, as compact UTF-8 JSON (``TARRY_EVENT_BYTES``)."""
    value_bytes: int = MIB
    """The largest run input, step result or recorded Python value (``TARRY_VALUE_BYTES``)."""
    key_bytes: int = 512
    """The largest event id, run target or correlation value (``TARRY_KEY_BYTES``)."""


_SCALARS = (str, int, float, bool, type(None))
_DIGITS_PER_BIT = math.log10(2)


def check_value(value: Any, what: str, limit: int, setting: str = "value_bytes") -> str:
    """Raise :class:`InvalidValue` (naming ``what`` and where inside it) unless ``value`` is
    portable JSON, or :class:`ValueTooLarge` when its JSON is over ``limit`` bytes (the
    ``[limits]`` key ``setting`` says which setting raises it). Returns the compact JSON text
    it measured, for a caller that stores the value (so it is encoded once)."""
    if not _plainly_portable(value, limit):
        _raise_problem(value, what, limit, setting)
    text = _ENCODER.encode(value)
    size = len(text) if text.isascii() else len(text.encode())
    if size > limit:
        raise ValueTooLarge(what, size=size, limit=limit, setting=setting)
    return text


def check_key(value: Any, what: str, limit: int) -> None:
    """Raise unless ``value`` (an event id, a run target, one correlation value) is portable
    and its JSON is at most ``limit`` bytes (``[limits] key_bytes``)."""
    check_value(value, what, limit, "key_bytes")


def check_path_segment(value: str, what: str, urls: str) -> None:
    """Raise unless ``value`` (an id) can be one segment of a URL path, so that the ``urls``
    that name it reach it: no ``/``, and not ``.`` or ``..``, which HTTP clients resolve
    away."""
    if "/" in value:
        raise InvalidValue(what, f"{clip(value, 100)!r} contains '/', which {urls} cannot "
                                 "hold; use another separator, such as ':'")
    if value in (".", ".."):
        raise InvalidValue(what, f"{value!r} cannot be named in {urls}; choose another")


def json_size(value: Any) -> int:
    """The size in bytes of ``value`` as compact UTF-8 JSON (a portable value)."""
    return len(_ENCODER.encode(value).encode())


def load_json(text: str | bytes) -> Any:
    """A stored value decoded from its JSON ``text`` as every store returns it (see the
    module's docstring): a number written with an exponent that is whole is an ``int``, and
    zero is never negative."""
    return json.loads(text, parse_float=_stored_number)


def _stored_number(text: str) -> int | float:
    """A JSON number with a fraction or an exponent, as PostgreSQL's ``jsonb`` returns it."""
    if "e" in text or "E" in text:
        exact = Decimal(text)
        if exact == exact.to_integral_value():
            return int(exact)
    number = float(text)
    return number if number else 0.0


def printable(text: str) -> str:
    """``text`` with NUL characters and lone surrogates spelled as escapes, so that a message
    quoting user data (an exception's text, a rendered ``fail:``) can always be stored."""
    if "\x00" not in text and _is_utf8(text):
        return text
    return "".join(_escaped(char) for char in text)


def stored_text(text: str, limit: int = TEXT_CHARS, *,
                redact: Callable[[str], str] | None = None) -> str:
    """``text`` as the engine stores it: ``redact``-ed (secrets masked), :func:`printable`,
    and at most ``limit`` characters, a longer text cut with a marker that says how long it
    was (an action that raises a 20 MiB message fails its step with 16 KiB of it).

    Only the part that can be kept is masked and escaped, with a margin past the cut, so a
    secret that straddles the cut is masked whole and a huge text costs no more than a
    small one."""
    head = text[:limit + _SECRET_MARGIN]
    kept = printable(head if redact is None else redact(head))
    if len(head) == len(text) and len(kept) <= limit:
        return kept
    marker = f" … [truncated from {len(text):,} characters]"
    return kept[:limit - len(marker)] + marker


_SECRET_MARGIN = 1_024
"""How far past the cut a text is masked: a secret longer than this that starts just before
the cut could show its start."""


def bounded_texts(value: Any, limit: int = TEXT_CHARS) -> Any:
    """``value`` (JSON data, such as a history entry's details) with every string longer
    than ``limit`` characters made :func:`stored_text`; the value itself when none is."""
    if isinstance(value, str):
        return stored_text(value, limit) if len(value) > limit else value
    if isinstance(value, Mapping):
        return {key: bounded_texts(item, limit) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [bounded_texts(item, limit) for item in value]
    return value


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _plainly_portable(value: Any, limit: int) -> bool:
    """True when ``value`` is certainly portable and has at most ``limit`` nodes: the fast
    check of the common case (plain dicts, lists and scalars). False sends the value to the
    exact walk, which finds the problem and where it is, or finds none (a ``Mapping`` that is
    no ``dict``, a string that merely looks suspect)."""
    return _plain_nodes(value, 0, limit) >= 0


def _plain_nodes(node: Any, depth: int, budget: int) -> int:
    """How many nodes ``node`` has, if it is plainly portable and has at most ``budget``;
    -1 otherwise (the recursion is bounded: a container at :data:`MAX_DEPTH` is refused)."""
    if budget < 1:
        return -1
    kind = type(node)
    if kind is str:
        return 1 if _plain_text(node) else -1
    if kind is dict or kind is list or kind is tuple:
        if depth >= MAX_DEPTH:
            return -1
        if kind is dict and not all(type(key) is str and _plain_text(key) for key in node):
            return -1
        used = 1
        for item in node.values() if kind is dict else node:
            nodes = _plain_nodes(item, depth + 1, budget - used)
            if nodes < 0:
                return -1
            used += nodes
        return used
    if kind is int:
        return 1 if node.bit_length() * _DIGITS_PER_BIT <= MAX_INTEGER_DIGITS else -1
    if kind is float:
        return 1 if math.isfinite(node) else -1
    return 1 if kind is bool or node is None else -1


def _plain_text(text: str) -> bool:
    return (text.isascii() and "\x00" not in text) or _text_problem(text) is None


def _raise_problem(value: Any, what: str, limit: int, setting: str) -> None:
    """Raise what makes ``value`` not portable, or too large, found by the exact walk; return
    when it is neither (a value the fast check could not vouch for)."""
    for count, (path, node) in enumerate(_walk(value), start=1):
        problem = _problem(node, len(path))
        if problem is not None:
            raise InvalidValue(what, _located(path, problem))
        if count > limit:  # every item takes a byte at least: too large, however shared
            raise ValueTooLarge(what, size=count, limit=limit, setting=setting, at_least=True)


def _walk(value: Any) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every node of ``value`` with its path, depth first (no recursion: any depth is safe,
    and the depth bound stops the walk at the first node too deep)."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        yield path, node
        if len(path) >= MAX_DEPTH:
            continue
        if isinstance(node, Mapping):
            stack.extend(((*path, key), item) for key, item in reversed(list(node.items())))
        elif isinstance(node, list | tuple):
            stack.extend(((*path, index), item)
                         for index, item in reversed(list(enumerate(node))))


def _problem(node: Any, depth: int) -> str | None:
    """What makes one node not portable (a sentence), or None."""
    if isinstance(node, Mapping | list | tuple):
        if depth >= MAX_DEPTH:
            return f"arrays and objects nest deeper than {MAX_DEPTH} levels"
        if isinstance(node, Mapping):
            return next((problem for key in node if (problem := _key_problem(key))), None)
        return None
    if not isinstance(node, _SCALARS):
        return (f"a {type(node).__name__} is not a JSON value (use a string, a number, "
                "true/false, null, a list or an object)")
    if isinstance(node, str):
        return _text_problem(node)
    if isinstance(node, float) and not math.isfinite(node):
        return f"{node} is not a JSON number (JSON has no NaN or infinity)"
    if isinstance(node, int) and abs(node).bit_length() * _DIGITS_PER_BIT > MAX_INTEGER_DIGITS:
        return f"an integer longer than {MAX_INTEGER_DIGITS:,} digits is not allowed"
    return None


def _key_problem(key: Any) -> str | None:
    if not isinstance(key, str):
        return f"the key {clip(repr(key))} is not a string (JSON object keys are strings)"
    problem = _text_problem(key)
    return None if problem is None else f"in the key '{printable(key)}': {problem}"


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "a NUL character (\\u0000) is not allowed in text (no store keeps it)"
    if not _is_utf8(text):
        return "a lone surrogate is not valid UTF-8"
    return None


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _escaped(char: str) -> str:
    return f"\\u{ord(char):04x}" if char == "\x00" or not _is_utf8(char) else char


def _located(path: tuple[str | int, ...], problem: str) -> str:
    if not path:
        return problem
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{printable(part)}"
                    for part in path).lstrip(".")
    return f"at {clip(where, 60)}: {problem}"

"""Reading command-line values: ``-i k=v`` pairs, ``--inputs`` JSON, one of an enumeration's
values, the OS user name.

Pure functions; a malformed value raises :class:`typer.BadParameter`, which the command line
reports as a usage error (exit code 2).
"""

from __future__ import annotations

import getpass
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Annotated, Any, TypeVar

import typer

from tarry._suggest import did_you_mean
from tarry.language.jsontext import parse_json

__all__ = ["WaitingFilter", "choice", "current_user", "parse_inputs", "parse_json_object",
           "parse_pair", "parse_value", "quoting_hints"]

E = TypeVar("E", bound=StrEnum)


def parse_value(text: str) -> Any:
    """``text`` as JSON when it parses (``3``, ``true``, ``{"a": 1}``), else the text itself."""
    try:
        return parse_json(text)
    except ValueError:
        return text


def parse_pair(text: str) -> tuple[str, Any]:
    """One ``-i name=value``: the name and its value (see :func:`parse_value`)."""
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        raise typer.BadParameter(f"expected name=value, got {text!r}", param_hint="'-i'")
    return name.strip(), parse_value(value)


def parse_inputs(pairs: Sequence[str], inputs_json: str | None) -> dict[str, Any]:
    """The run's inputs: the ``--inputs`` object, overridden by each ``-i name=value``."""
    inputs = parse_json_object(inputs_json, "--inputs") if inputs_json is not None else {}
    inputs.update(parse_pair(pair) for pair in pairs)
    return inputs


def quoting_hints(pairs: Sequence[str], problems: Sequence[str]) -> list[str]:
    """``problems`` of a start, each that says an ``-i`` value read as JSON is not a string
    followed by how to pass it as text (quoted, or in ``--inputs``)."""
    read_as_json = {name: text for name, text in (pair.partition("=")[::2] for pair in pairs)
                    if not isinstance(parse_value(text), str)}
    return [_with_quoting_hint(problem, read_as_json) for problem in problems]


def _with_quoting_hint(problem: str, read_as_json: dict[str, str]) -> str:
    for name, text in read_as_json.items():
        if problem.startswith(f"input '{name}' must be a string"):
            return (f"{problem} (-i reads {text} as JSON; for the text, quote it: "
                    f"-i '{name}=\"{text}\"', or --inputs '{{\"{name}\": \"{text}\"}}')")
    return problem


def parse_json_object(text: str, option: str) -> dict[str, Any]:
    """``text`` as a JSON object; anything else is a usage error of ``option``."""
    try:
        value = parse_json(text)
    except ValueError as exc:
        raise typer.BadParameter(f"not valid JSON ({exc})", param_hint=f"'{option}'") from None
    if not isinstance(value, dict):
        raise typer.BadParameter(f"expected a JSON object such as '{{\"name\": \"Ada\"}}', "
                                 f"got {_JSON_KINDS.get(type(value), 'a value')}",
                                 param_hint=f"'{option}'")
    return value


_JSON_KINDS: dict[type, str] = {list: "an array", str: "a string", int: "a number",
                                float: "a number", bool: "a boolean", type(None): "null"}


def choice(kind: type[E], noun: str) -> Callable[[str], E]:
    """A parser of one value of ``kind`` (any case) for an option; anything else is a usage
    error that lists the values: ``'bogus' is not a status; use one of: held, pending, …``."""
    def parse(text: str) -> E:
        try:
            return kind(text.lower())
        except ValueError:
            values = ", ".join(kind)
            raise typer.BadParameter(f"{text!r} is not {noun}{did_you_mean(text.lower(), kind)}"
                                     f"; use one of: {values}") from None
    return parse


def current_user() -> str:
    """The OS user name (recorded as who cancelled a run); ``unknown`` when there is none."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


WaitingFilter = Annotated[str | None, typer.Option(
    "--waiting-for", metavar="W",
    help="Only runs waiting for this: timer, event, hold, poll, task, retry, child, slot, "
         "throttle, "
         "window, or an event type.")]
"""``--waiting-for``: the run list's filter on what a run waits for."""

"""A Python flow as registered on an App: the function, and the flow the engine stores.

``@app.flow("settle-order")`` on ``async def settle_order(ctx, order_id: str)`` gives a flow
named ``settle-order`` whose inputs are the function's parameters after the context: a
parameter without a default is a required input, one with a default an optional input, and
an annotation of a JSON type (``str``, ``int``, ``float``, ``bool``, ``dict``, ``list``) is the
input's type (anything else is ``any``). So ``app.start("settle-order", order_id=3)`` is
refused as clearly as a YAML flow's wrong input.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from tarry.engine.catalog import program_descriptor
from tarry.language.fields import NAME_PATTERN
from tarry.language.model import Flow, InputSpec, InputType, Scope

__all__ = ["FlowFunction", "PythonFlow", "python_flow"]

FlowFunction = Callable[..., Awaitable[Any]]
"""``async def flow(ctx, **inputs)``."""

_NAME = re.compile(NAME_PATTERN)
_INPUT_TYPES: dict[Any, InputType] = {str: "string", int: "integer", float: "number",
                                      bool: "boolean", dict: "object", list: "array"}
_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


@dataclass(frozen=True)
class PythonFlow:
    """A registered Python flow: its name, its function, and its stored definition."""

    name: str
    function: FlowFunction
    definition: Flow


def python_flow(name: str, function: FlowFunction) -> PythonFlow:
    """The flow ``name`` running ``function``; TypeError or ValueError when either is unfit."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"flow name {name!r} is invalid: use a name matching {NAME_PATTERN}")
    where = f"flow '{name}' ({_qualified(function)})"
    if not inspect.iscoroutinefunction(function):
        raise TypeError(f"{where} must be an async function: async def "
                        f"{getattr(function, '__name__', 'flow')}(ctx, ...)")
    source = program_descriptor(name)
    definition = Flow(name=name, body=Scope(()), source=source,
                      digest=hashlib.sha256(source.encode()).hexdigest(),
                      path=_qualified(function), description=_summary(function),
                      inputs=_inputs(function, where))
    return PythonFlow(name, function, definition)


def _inputs(function: FlowFunction, where: str) -> dict[str, InputSpec]:
    parameters = list(inspect.signature(function).parameters.values())
    if not parameters or parameters[0].kind not in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
        raise TypeError(f"{where} must take the Context as its first parameter")
    hints = _hints(function)
    inputs: dict[str, InputSpec] = {}
    for parameter in parameters[1:]:
        if parameter.kind not in _NAMED:
            raise TypeError(f"{where}: parameter '{parameter.name}' must be an ordinary named "
                            "parameter (each input is passed by name; no *args, **kwargs or "
                            "positional-only inputs)")
        inputs[parameter.name] = _spec(parameter, hints.get(parameter.name), where)
    return inputs


def _spec(parameter: inspect.Parameter, hint: Any, where: str) -> InputSpec:
    kind = _INPUT_TYPES.get(typing.get_origin(hint) or hint, "any")
    if parameter.default is inspect.Parameter.empty:
        return InputSpec(parameter.name, kind, required=True)
    try:
        json.dumps(parameter.default, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{where}: the default of input '{parameter.name}' is not JSON data "
                        f"({exc})") from None
    return InputSpec(parameter.name, kind, default=parameter.default, has_default=True)


def _hints(function: FlowFunction) -> dict[str, Any]:
    try:
        return typing.get_type_hints(function)
    except Exception:  # an annotation that does not resolve here: its input is 'any'
        return {}


def _qualified(function: object) -> str:
    module = getattr(function, "__module__", None) or "?"
    return f"{module}:{getattr(function, '__qualname__', repr(function))}"


def _summary(function: FlowFunction) -> str:
    doc = inspect.getdoc(function) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""

"""The built-in actions: ``log``, ``set``, ``fail``, ``http.request`` and ``emit``.

``emit`` sends an event into the engine that runs the flow, so it is bound to that engine's
send path: the engine adds it to its registry (:func:`register_emit`).
"""

from __future__ import annotations

from typing import Any, Protocol

from tarry._suggest import did_you_mean
from tarry.actions import ActionContext, ActionFunction, ActionRegistry, StepFailure
from tarry.engine.documents import event_document
from tarry.errors import EventError
from tarry.model import EventRecord

__all__ = ["EventSender", "emit_action", "register_builtins", "register_emit"]

_HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def log(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    """``log: {message}`` or ``log: "text"``: write a line to the run's history."""
    message = str(args.get("message", args.get("value", "")))
    ctx.note(message)
    ctx.logger.info("run %s step %s: %s", ctx.run_id, ctx.step_path, message,
                    extra={"run_id": ctx.run_id})
    return {"message": message}


def set_(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    """``set: {name: value, …}``: bind the given values."""
    return args


def fail(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    """``fail: {message}`` or ``fail: "text"``: fail the step with ``error.type = failed``."""
    raise StepFailure(str(args.get("message", args.get("value", "failed"))))


async def http_request(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    """``http.request: {method, url, headers, json, timeout}`` → ``{status, headers, json|text}``.

    A response of any status is a result (branch on ``status``); a transport failure
    (refused, DNS, timeout) fails the step with ``error.type = http``. Its ``timeout``
    (30 seconds by default) is capped by the step's.
    """
    method = str(args.get("method", "GET")).upper()
    if method not in _HTTP_METHODS:
        raise StepFailure(f"unsupported HTTP method '{method}'", type="http")
    if "url" not in args:
        raise StepFailure("http.request needs a 'url'", type="http")
    timeout = float(args.get("timeout", 30))
    if ctx.timeout is not None:  # its own timeout, never past the step's
        timeout = min(timeout, ctx.timeout.total_seconds())
    headers = {"Idempotency-Key": ctx.idempotency_key, **dict(args.get("headers") or {})}
    import httpx  # noqa: PLC0415 - only where a flow calls out: see tarry/__init__.py

    try:
        async with httpx.AsyncClient(timeout=timeout) as client:
            response = await client.request(method, str(args["url"]), headers=headers,
                                            json=args.get("json"))
    except httpx.HTTPError as exc:
        raise StepFailure(f"{method} {args['url']}: {exc or type(exc).__name__}",
                          type="http") from exc
    result: dict[str, Any] = {"status": response.status_code,
                              "headers": dict(response.headers)}
    try:
        result["json"] = response.json()
    except ValueError:
        result["text"] = response.text
    return result


class EventSender(Protocol):
    """The engine's send path (``AsyncEngine.send``): validate, record and deliver one event
    (awaited: an action runs on the worker's event loop)."""

    async def __call__(self, type: str, data: Any, *, id: str | None = None) -> EventRecord:
        """Send one event; an invalid one comes back quarantined, an unknown type raises."""
        ...


_EMIT_ARGUMENTS = ("type", "data", "id")


def emit_action(send: EventSender) -> ActionFunction:
    """The ``emit: {type, data, id?}`` action, sending through ``send``; binds the event
    document.

    The id defaults to one derived from the step's idempotency key, so the re-run of an emit
    whose checkpoint a crash lost is a harmless duplicate. An unknown type or an invalid
    payload fails the step (``error.type = event``); the invalid event stays quarantined.
    """
    async def emit(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        event_type, data, event_id = _emit_arguments(args)
        try:
            record = await send(event_type, data,
                                id=event_id or f"emit-{ctx.idempotency_key}")
        except EventError as exc:
            raise StepFailure(str(exc), type="event") from None
        if record.errors:
            raise StepFailure(f"event '{record.id}' of type '{record.type}' is invalid: "
                              + "; ".join(record.errors), type="event")
        return event_document(record)
    return emit


def _emit_arguments(args: dict[str, Any]) -> tuple[str, dict[str, Any], str | None]:
    for key in args:
        if key not in _EMIT_ARGUMENTS:
            raise StepFailure(f"unknown emit argument '{key}'{did_you_mean(key, _EMIT_ARGUMENTS)}"
                              " (emit takes {type, data, id})", type="event")
    event_type, data, event_id = args.get("type"), args.get("data"), args.get("id")
    if not isinstance(event_type, str) or not event_type:
        raise StepFailure("emit needs 'type', the name of a declared event type", type="event")
    if not isinstance(data, dict):
        raise StepFailure(f"emit needs 'data', a JSON object, got {_kind(data)}", type="event")
    if isinstance(event_id, int) and not isinstance(event_id, bool):
        event_id = str(event_id)
    if event_id is not None and not (isinstance(event_id, str) and event_id):
        raise StepFailure(f"the 'id' of emit must be a non-empty string, got {_kind(event_id)}",
                          type="event")
    return event_type, data, event_id


_KINDS: dict[type, str] = {list: "a list", str: "a string", int: "a number", float: "a number",
                           bool: "a boolean", type(None): "nothing", dict: "an object"}


def _kind(value: Any) -> str:
    return _KINDS.get(type(value), type(value).__name__)


def register_emit(registry: ActionRegistry, send: EventSender) -> None:
    """Add ``emit`` bound to ``send``, unless ``registry`` already has one (a stub or a user
    action of that name wins, as over every built-in)."""
    if "emit" not in registry:
        registry.register("emit", emit_action(send))


def register_builtins(registry: ActionRegistry) -> None:
    """Add the built-in actions to ``registry``."""
    registry.register("log", log, pure=True)
    registry.register("set", set_, pure=True)
    registry.register("fail", fail, pure=True)
    registry.register("http.request", http_request)

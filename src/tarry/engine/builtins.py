"""The built-in actions: ``log``, ``set``, ``fail`` and ``http.request``."""

from __future__ import annotations

from typing import Any

import httpx

from tarry.engine.actions import ActionContext, ActionRegistry, StepFailure

__all__ = ["register_builtins"]

_HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def log(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    """``log: {message}`` or ``log: "text"``: write a line to the run's history."""
    message = str(args.get("message", args.get("value", "")))
    ctx.note(message)
    ctx.logger.info("run %s step %s: %s", ctx.run_id, ctx.step_path, message)
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
    (refused, DNS, timeout) fails the step with ``error.type = http``.
    """
    method = str(args.get("method", "GET")).upper()
    if method not in _HTTP_METHODS:
        raise StepFailure(f"unsupported HTTP method '{method}'", type="http")
    if "url" not in args:
        raise StepFailure("http.request needs a 'url'", type="http")
    timeout = float(args.get("timeout", 30))
    headers = {"Idempotency-Key": ctx.idempotency_key, **dict(args.get("headers") or {})}
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


def register_builtins(registry: ActionRegistry) -> None:
    """Add the built-in actions to ``registry``."""
    registry.register("log", log, pure=True)
    registry.register("set", set_, pure=True)
    registry.register("fail", fail, pure=True)
    registry.register("http.request", http_request)

"""The API's contract: the OpenAPI document at ``/openapi.json`` and the page at ``/docs``
that shows it, both served from the package (the page's assets included: it works offline).

FastAPI builds the document from the routes; :func:`openapi_document` adds what no route can
declare for itself: the models of bodies a route reads by hand (``POST /v1/events/{event}``
reads its body raw, since a signed sender's payload is not an envelope), and the 413 that the
body limit answers in front of every route. A server without a token (loopback only) asks
for none, and its document says so: no operation lists a security requirement.

A 405 names in ``Allow`` every method the document lists for the path (the router alone
names only the first route whose path matched, and a path has one route per method).
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from tarry.server.api.models import SendEvent
from tarry.server.errors import ERROR_TYPES, error_response

__all__ = ["ASSETS_PATH", "DOCS_PATH", "OPENAPI_PATH", "allowed_methods", "install_contract",
           "openapi_document"]

OPENAPI_PATH = "/openapi.json"
DOCS_PATH = "/docs"
ASSETS_PATH = "/docs/assets"
"""Where the docs page's script, stylesheet and icon are served from."""

_HAND_READ: tuple[type[BaseModel], ...] = (SendEvent,)
"""Bodies that routes read by hand and reference as ``#/components/schemas/<name>``."""

_EVERYWHERE = (413,)
"""Statuses the middleware in front of every route can answer."""

_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})

router = APIRouter(include_in_schema=False)


def install_contract(app: FastAPI) -> None:
    """Serve ``/openapi.json``, ``/docs`` and the docs' assets on ``app`` (created with
    ``openapi_url=None`` and ``docs_url=None``)."""
    app.state.openapi = None
    app.include_router(router)
    app.mount(ASSETS_PATH, StaticFiles(directory=str(files("fastapi_offline") / "static")),
              name="docs-assets")
    app.add_exception_handler(405, _not_allowed)


@router.get(OPENAPI_PATH)
async def openapi(request: Request) -> JSONResponse:
    """The OpenAPI 3.1 document of the API."""
    return JSONResponse(_document(request.app))


@router.get(DOCS_PATH)
async def docs(request: Request) -> HTMLResponse:
    """The API's reference, drawn by Swagger UI from the package's own copy."""
    root = request.scope.get("root_path", "")
    return get_swagger_ui_html(
        openapi_url=f"{root}{OPENAPI_PATH}", title=f"{request.app.title} API",
        swagger_js_url=f"{root}{ASSETS_PATH}/swagger-ui-bundle.js",
        swagger_css_url=f"{root}{ASSETS_PATH}/swagger-ui.css",
        swagger_favicon_url=f"{root}{ASSETS_PATH}/favicon.png",
        swagger_ui_parameters={"validatorUrl": None})


def openapi_document(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document of ``app``'s routes, completed (see the module)."""
    document = get_openapi(title=app.title, version=app.version,
                           description=app.description, routes=app.routes)
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for model in _HAND_READ:
        schemas.update(_component(model))
    open_server = not app.state.principals.required
    for operation in _operations(document):
        responses = operation.setdefault("responses", {})
        for status in _EVERYWHERE:
            responses.setdefault(str(status), _error_response(status))
        if open_server:
            operation.pop("security", None)
    if open_server:
        document["components"].pop("securitySchemes", None)
    return document


def allowed_methods(document: dict[str, Any], path: str) -> list[str]:
    """The methods ``document`` lists for the path item whose template ``path`` fits (a
    concrete path before a templated one, as OpenAPI matches them: ``/v1/runs/batch``, not
    ``/v1/runs/{run_id}``)."""
    paths = document.get("paths", {})
    fitting = [template for template in paths if _fits(template, path)]
    if not fitting:
        return []
    item = paths[min(fitting, key=lambda template: template.count("{"))]
    return sorted(method.upper() for method in item if method in _METHODS)


def _fits(template: str, path: str) -> bool:
    parts, segments = template.split("/"), path.split("/")
    return len(parts) == len(segments) and all(
        part == segment or (part.startswith("{") and part.endswith("}") and segment != "")
        for part, segment in zip(parts, segments, strict=True))


def _document(app: FastAPI) -> dict[str, Any]:
    if app.state.openapi is None:
        app.state.openapi = openapi_document(app)
    document: dict[str, Any] = app.state.openapi
    return document


async def _not_allowed(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    allowed = allowed_methods(_document(request.app), request.url.path)
    headers = {**(exc.headers or {}), **({"Allow": ", ".join(allowed)} if allowed else {})}
    return error_response(405, f"{request.method} is not allowed on {request.url.path}",
                          headers=headers)


def _component(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    nested = schema.pop("$defs", {})
    return {model.__name__: schema, **nested}


def _operations(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [operation for item in document.get("paths", {}).values()
            for method, operation in item.items() if method in _METHODS]


def _error_response(status: int) -> dict[str, Any]:
    return {"description": ERROR_TYPES[status], "content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/ErrorBody"}}}}

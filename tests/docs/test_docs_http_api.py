"""The site's hooks: the HTTP API page rendered from an OpenAPI document, and the docstrings'
roles made plain."""

from __future__ import annotations

import importlib.util
from types import ModuleType
from typing import Any

from markdown_blocks import ROOT


def _hook(name: str) -> ModuleType:
    """The hook module ``scripts/<name>.py`` (mkdocs loads it by path, and so do we)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HTTP_API = _hook("docs_http_api")
ROLES = _hook("docs_roles")

DOCUMENT: dict[str, Any] = {
    "info": {"version": "9.9"},
    "paths": {"/v1/things/{id}": {"post": {
        "description": "Poke a thing; ``id`` is its id.",
        "parameters": [{"name": "id", "in": "path", "required": True,
                        "schema": {"type": "string"}, "description": "a | b"}],
        "requestBody": {"content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/Missing"}}}},
        "responses": {"404": {"description": "not_found", "content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/Error"}}}},
                      "200": {"description": "Successful Response", "content": {
                          "application/json": {"schema": {"type": "array", "items": {
                              "anyOf": [{"$ref": "#/components/schemas/Error"},
                                        {"type": "null"}]}}}}}}}}},
    "components": {"schemas": {
        "Error": {"description": "What went wrong.", "required": ["type"], "properties": {
            "type": {"enum": ["a", "b"]}, "message": {"type": "string"}}},
        "Word": {"type": "string"}}},
}


def test_every_operation_is_rendered_with_its_parameters_body_and_answers() -> None:
    page = HTTP_API.render(DOCUMENT)
    assert page.startswith("# HTTP API\n")
    assert "Version 9.9." in page
    assert "### `POST /v1/things/{id}`\n\nPoke a thing; `id` is its id.\n" in page
    assert "| `id` | path | string | yes | a \\| b |" in page
    assert "Body (`application/json`): `Missing`." in page
    assert "| 200 | Successful Response | array of [Error](#error) or null |" in page
    assert page.index("| 200 |") < page.index("| 404 | not_found | [Error](#error) |")


def test_every_schema_is_rendered_with_its_properties() -> None:
    page = HTTP_API.render(DOCUMENT)
    assert "### Error\n\nWhat went wrong.\n\n| property | type | required | description |" in page
    assert "| `type` | one of `a`, `b` | yes |  |" in page
    assert "| `message` | string | no |  |" in page
    assert "### Word\n\nType: string.\n" in page


def test_the_server_document_renders_every_route() -> None:
    document = HTTP_API.openapi_document()
    page = HTTP_API.render(document)
    routes = [f"### `{method.upper()} {path}`" for path, operations in document["paths"].items()
              for method in operations]
    assert len(routes) > 10
    assert [route for route in routes if route not in page] == []


def test_roles_become_code_and_a_tilde_keeps_the_last_part() -> None:
    html = (":class:<code>Client</code> and :meth:<code>~tarry.Context.parallel</code>, "
            "not <code>:kept:</code>")
    assert ROLES.plain_roles(html) == ("<code>Client</code> and <code>parallel</code>, "
                                       "not <code>:kept:</code>")

"""The documentation site's HTTP API page, written from the OpenAPI document of ``tarry serve``.

An mkdocs hook (``hooks:`` in ``mkdocs.yml``): generated at each build, the page cannot go
stale. :func:`openapi_document` builds the server's application on an empty project in a
temporary folder and asks it for its document; :func:`render` turns any such document into
Markdown (pure, tested in ``tests/docs/test_docs_http_api.py``).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Collection
from pathlib import Path
from typing import Any

PAGE = "http-api.md"
"""The page's path in the site, as ``mkdocs.yml``'s nav names it."""

_INTRO = """# HTTP API

`tarry serve` answers JSON over HTTP under `/v1`. This page is written from the OpenAPI
document the server publishes at `/openapi.json`, each time the site is built, so it always
matches the code. [Serving the HTTP API](serve.md) explains authentication, errors, retries
and webhooks with examples.
"""

_METHODS = ("get", "post", "put", "patch", "delete")
_REST_LITERAL = re.compile(r"``([^`]+)``")


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of ``tarry serve`` for an empty project (the routes and schemas
    do not depend on the project)."""
    from tarry.config import load_settings  # noqa: PLC0415 - only when a build asks
    from tarry.engine.runtime import Engine  # noqa: PLC0415
    from tarry.server.app import create_app  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as folder:
        settings = load_settings(Path(folder), env={})
        engine = Engine.from_settings(settings)
        try:
            return create_app(engine, settings, worker=False).openapi()
        finally:
            engine.close()


def render(document: dict[str, Any]) -> str:
    """The Markdown page of ``document``: every operation, then every schema."""
    schemas = document.get("components", {}).get("schemas", {})
    parts = [_INTRO, f"Version {document['info']['version']}.\n", "## Operations\n"]
    for path, operations in document["paths"].items():
        for method in _METHODS:
            if method in operations:
                parts.append(_operation(method, path, operations[method], schemas))
    parts.append("## Schemas\n")
    for name, schema in sorted(schemas.items()):
        parts.append(_schema(name, schema, schemas))
    return "\n".join(parts)


def _text(value: str | None) -> str:
    """Docstring text as Markdown (reStructuredText's ````literal```` as `` `literal` ``)."""
    return _REST_LITERAL.sub(r"`\1`", (value or "").strip())


def _cell(value: str) -> str:
    """``value`` fit for one cell of a Markdown table."""
    return _text(value).replace("|", "\\|").replace("\n", " ")


def _type(schema: dict[str, Any], named: Collection[str]) -> str:
    """A schema's type in a few words, with links to the ``named`` schemas the page shows
    (a reference to a schema the document does not hold is shown as its name)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})" if name in named else f"`{name}`"
    if "anyOf" in schema:
        return " or ".join(_type(option, named) for option in schema["anyOf"])
    if "enum" in schema:
        return "one of " + ", ".join(f"`{value}`" for value in schema["enum"])
    if schema.get("type") == "array":
        return f"array of {_type(schema.get('items', {}), named)}"
    return str(schema.get("type", "any"))


def _operation(method: str, path: str, operation: dict[str, Any],
               named: Collection[str]) -> str:
    """One operation: what it does, its parameters, its body and its answers."""
    lines = [f"### `{method.upper()} {path}`\n", _text(operation.get("description")
                                                     or operation.get("summary")), ""]
    parameters = operation.get("parameters", [])
    if parameters:
        lines += ["| parameter | in | type | required | description |",
                  "| --- | --- | --- | --- | --- |"]
        lines += [f"| `{p['name']}` | {p['in']} | {_cell(_type(p.get('schema', {}), named))} | "
                  f"{'yes' if p.get('required') else 'no'} | {_cell(p.get('description', ''))} |"
                  for p in parameters]
        lines.append("")
    body = operation.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        lines += [f"Body (`{media}`): {_type(content.get('schema', {}), named)}.", ""]
    lines += ["| status | meaning | body |", "| --- | --- | --- |"]
    for status, answer in sorted(operation.get("responses", {}).items()):
        shapes = [_type(content.get("schema", {}), named)
                  for content in answer.get("content", {}).values() if content.get("schema")]
        lines.append(f"| {status} | {_cell(answer.get('description', ''))} | "
                     f"{_cell(', '.join(shapes)) or '–'} |")
    return "\n".join(lines) + "\n"


def _schema(name: str, schema: dict[str, Any], named: Collection[str]) -> str:
    """One named schema: its description and its properties."""
    lines = [f"### {name}\n"]
    if schema.get("description"):
        lines += [_text(schema["description"]), ""]
    properties = schema.get("properties", {})
    if not properties:
        lines += [f"Type: {_type(schema, named)}.", ""]
        return "\n".join(lines)
    required = set(schema.get("required", []))
    lines += ["| property | type | required | description |", "| --- | --- | --- | --- |"]
    lines += [f"| `{key}` | {_cell(_type(value, named))} | {'yes' if key in required else 'no'} | "
              f"{_cell(value.get('description', ''))} |" for key, value in properties.items()]
    return "\n".join(lines) + "\n"


def on_files(files: Any, config: Any) -> Any:
    """mkdocs hook: add the HTTP API page, rendered from the server's document."""
    from mkdocs.structure.files import File  # noqa: PLC0415 - mkdocs is a docs-only tool

    files.append(File.generated(config, PAGE, content=render(openapi_document())))
    return files

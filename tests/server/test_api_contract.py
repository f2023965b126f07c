"""The API's contract, checked by machine: ``/openapi.json`` is a valid OpenAPI 3.1 document
(openapi-spec-validator), every reference in it resolves, no two paths share a template, every
status a route can answer is listed with the one error shape, and a 405 names in ``Allow``
every method of its path."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from openapi_spec_validator import validate
from server_support import Served, serve

from tarry.server.contract import allowed_methods

METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


@pytest.fixture
def document(served: Served) -> dict[str, Any]:
    """The served document."""
    response = httpx.get(f"{served.url}/openapi.json")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Every (method, path, operation) of the document."""
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield method, path, operation


def references(node: object) -> Iterator[str]:
    """Every ``$ref`` anywhere under ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from references(value)
    elif isinstance(node, list):
        for value in node:
            yield from references(value)


def resolve(document: dict[str, Any], reference: str) -> object:
    """What a local ``#/…`` reference points at; KeyError when nothing."""
    assert reference.startswith("#/"), reference
    node: Any = document
    for part in reference[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def test_the_document_lists_every_endpoint(document: dict[str, Any]) -> None:
    assert set(document["paths"]) == {
        "/healthz", "/metrics", "/v1/runs", "/v1/runs/{run_id}", "/v1/runs/{run_id}/cancel",
        "/v1/runs/{run_id}/retry", "/v1/runs/{run_id}/rerun", "/v1/runs/batch",
        "/v1/runs/migrate", "/v1/batches/{batch_id}",
        "/v1/held", "/v1/events", "/v1/events/{event}", "/v1/events/{event_id}/redeliver",
        "/v1/events/{event_id}/discard", "/v1/flows", "/v1/flows/{name}/graph", "/v1/tasks",
        "/v1/tasks/{task_id}/complete"}


def test_the_document_passes_the_openapi_validator(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.1")
    validate(document)


def test_every_reference_resolves(document: dict[str, Any]) -> None:
    found = set(references(document))
    assert "#/components/schemas/SendEvent" in found
    unresolved = []
    for reference in sorted(found):
        try:
            resolve(document, reference)
        except KeyError:
            unresolved.append(reference)
    assert unresolved == []


def test_no_two_paths_share_a_template(document: dict[str, Any]) -> None:
    templates = [re.sub(r"\{[^}]*\}", "{}", path) for path in document["paths"]]
    assert len(templates) == len(set(templates)), sorted(templates)


def test_both_operations_of_the_event_path_are_documented(document: dict[str, Any]) -> None:
    item = document["paths"]["/v1/events/{event}"]
    assert {"get", "post"} <= set(item)
    described = {method: [p["description"] for p in item[method]["parameters"]
                          if p["in"] == "path"] for method in ("get", "post")}
    assert described == {"get": ["The event's id."],
                         "post": ["The type of the event to send (a declared one)."]}
    content = item["post"]["requestBody"]["content"]
    assert content["application/json"]["schema"]["anyOf"][0] == {
        "$ref": "#/components/schemas/SendEvent"}
    assert set(content) == {"application/json", "application/x-www-form-urlencoded"}


def test_every_status_a_route_can_answer_is_listed_with_the_error_shape(
        document: dict[str, Any]) -> None:
    missing = []
    for method, path, operation in operations(document):
        responses = operation["responses"]
        can_answer = {413, 503} if path != "/healthz" else {413}
        if path.startswith("/v1/"):
            can_answer |= {401}
        if operation.get("parameters"):
            can_answer |= {422}
        if "requestBody" in operation:
            can_answer |= {400, 422}
        if any(p["name"] == "cursor" for p in operation.get("parameters", [])):
            can_answer |= {400}
        missing += [f"{method.upper()} {path}: {status}" for status in sorted(can_answer)
                    if str(status) not in responses]
        for status, response in responses.items():
            if status.startswith(("4", "5")) and path != "/healthz":
                schema = response["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (path, status)
    assert missing == []
    assert "HTTPValidationError" not in document["components"]["schemas"]


def test_the_error_shape_is_type_message_details(document: dict[str, Any]) -> None:
    info = document["components"]["schemas"]["ErrorInfo"]
    assert set(info["properties"]) == {"type", "message", "details"}


@pytest.mark.parametrize(("method", "path", "allow"), [
    ("DELETE", "/v1/runs", "GET, POST"),
    ("PUT", "/v1/events/deal.approved", "GET, POST"),
    ("PATCH", "/v1/runs/r1", "GET"),
    ("GET", "/v1/runs/r1/cancel", "POST"),
    ("DELETE", "/v1/events/e1/redeliver", "POST"),
    ("OPTIONS", "/v1/runs/batch", "POST"),
    ("OPTIONS", "/v1/runs/migrate", "POST"),
])
def test_a_405_names_every_method_of_its_path(served: Served, method: str, path: str,
                                              allow: str) -> None:
    response = httpx.request(method, f"{served.url}{path}")
    assert response.status_code == 405
    assert response.headers["allow"] == allow
    assert response.json() == {"error": {
        "type": "method_not_allowed", "message": f"{method} is not allowed on {path}",
        "details": {}}}


def test_allowed_methods_fit_templates_segment_by_segment() -> None:
    document = {"paths": {"/v1/events/{event}": {"get": {}, "post": {}, "parameters": []},
                          "/v1/events/{event_id}/discard": {"post": {}}}}
    assert allowed_methods(document, "/v1/events/e1") == ["GET", "POST"]
    assert allowed_methods(document, "/v1/events/e1/discard") == ["POST"]
    assert allowed_methods(document, "/v1/events/") == []
    assert allowed_methods(document, "/v1/events/e1/other") == []


def test_both_uses_of_the_shared_event_path_work(served: Served) -> None:
    sent = httpx.post(f"{served.url}/v1/events/deal.approved",
                      json={"id": "e1", "data": {"deal": "d1", "approved": True}})
    assert sent.status_code == 202, sent.text
    read = httpx.get(f"{served.url}/v1/events/e1")
    assert read.status_code == 200
    assert (read.json()["id"], read.json()["type"]) == ("e1", "deal.approved")


def test_only_a_server_with_a_token_documents_the_bearer_scheme(project: Any,
                                                                document: dict[str, Any]
                                                                ) -> None:
    assert [path for _, path, operation in operations(document) if "security" in operation] \
        == []
    assert "securitySchemes" not in document["components"]
    with serve(project, {"TARRY_API_TOKEN": "t0ken"}) as server:
        guarded = httpx.get(f"{server.url}/openapi.json").json()
    secured = {path for _, path, operation in operations(guarded) if "security" in operation}
    assert secured == {path for path in guarded["paths"] if path.startswith("/v1/")}
    assert guarded["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


def test_sending_to_the_shared_path_still_needs_the_token(project: Any) -> None:
    with serve(project, {"TARRY_API_TOKEN": "t0ken"}) as server:
        refused = httpx.post(f"{server.url}/v1/events/deal.approved",
                             json={"data": {"deal": "d1", "approved": True}})
        accepted = httpx.post(f"{server.url}/v1/events/deal.approved",
                              json={"data": {"deal": "d1", "approved": True}},
                              headers={"Authorization": "Bearer t0ken"})
    assert refused.status_code == 401
    assert accepted.status_code == 202

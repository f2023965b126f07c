"""A bounded property-based run of every operation in /openapi.json (schemathesis): no call
gets a 5xx, and every response matches the schema the document declares for it."""

from __future__ import annotations

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error, response_schema_conformance
from server_support import Served


def test_the_document_is_openapi_3_1_and_lists_every_endpoint(served: Served) -> None:
    document = httpx.get(f"{served.url}/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    assert set(document["paths"]) == {
        "/healthz", "/metrics", "/v1/runs", "/v1/runs/{run_id}", "/v1/runs/{run_id}/cancel",
        "/v1/runs/{run_id}/retry", "/v1/runs/{run_id}/rerun", "/v1/runs/batch",
        "/v1/batches/{batch_id}",
        "/v1/held", "/v1/events", "/v1/events/{event_type}", "/v1/events/{event_id}",
        "/v1/events/{event_id}/redeliver", "/v1/events/{event_id}/discard", "/v1/flows",
        "/v1/flows/{name}/graph", "/v1/tasks", "/v1/tasks/{task_id}/complete"}


EXAMPLES = 8
"""Examples per operation: enough to cross every parameter's edges, little enough for CI."""


def test_no_call_gets_a_5xx_or_a_response_outside_its_schema(served: Served) -> None:
    api = schemathesis.openapi.from_url(f"{served.url}/openapi.json")
    for found in api.get_all_operations():
        operation = found.ok()

        @given(operation.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def call(case: schemathesis.Case) -> None:
            case.call_and_validate(checks=[not_a_server_error, response_schema_conformance])

        call()

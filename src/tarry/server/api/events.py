"""``/v1/events``: send events, and the inbox an operator works through.

``POST /v1/events/{type}`` takes ``{data, id?}`` with a bearer token — or, for a type whose
manifest declares ``secret_env``, the payload itself signed by the sender (see
:mod:`tarry.server.webhooks`). 202 with the event document once it is durable; an invalid
payload is quarantined and answered 422 with the reasons; a duplicate id is 202 ``duplicate``.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from tarry.engine.documents import event_document
from tarry.model import EventRecord, EventState
from tarry.server.api.context import EngineDep, error_responses, wake_worker
from tarry.server.api.models import EventDocument, EventList, RedeliverEvent, SendEvent
from tarry.server.api.paging import Cursor, Limit, decode_cursor, encode_cursor
from tarry.server.auth import principal_of_request
from tarry.server.calls import off_loop
from tarry.server.errors import ApiError
from tarry.server.signatures import SignatureRejected, verify
from tarry.server.webhooks import delivery_id, handshake, sender_fields, signed_payload

__all__ = ["WEBHOOK_LOGGER", "router"]

WEBHOOK_LOGGER = "tarry.server.webhooks"
"""The logger of refused webhook deliveries (one warning each, with its reason)."""

webhook_logger = logging.getLogger(WEBHOOK_LOGGER)

router = APIRouter(prefix="/v1/events", tags=["events"],
                   responses=error_responses(401, 503))

_OPERATOR = [Depends(principal_of_request)]
EventId = Annotated[str, Path(description="The event's id.", max_length=512)]
TypeToSend = Annotated[str, Path(alias="event", max_length=512,
                                 description="The type of the event to send (a declared one).")]
IdToRead = Annotated[str, Path(alias="event", max_length=512, description="The event's id.")]
"""``POST`` and ``GET /v1/events/{event}`` share one path: one sends an event of a type, the
other reads an event by its id (OpenAPI allows one template per path, so one parameter
name)."""

_HANDSHAKE: dict[int | str, dict[str, Any]] = {200: {
    "description": "A sender's handshake (GitHub's ping, Slack's url_verification with its "
                   "challenge echoed), answered and not recorded.",
    "content": {"application/json": {"schema": {"type": "object"}}}}}
_SIGNED = "For a type that declares a signature: the sender's payload itself"
_SEND = {"security": [{"HTTPBearer": []}, {}], "requestBody": {
    "required": True,
    "description": "``{data, id?}``; for a type that declares a signature, the sender's "
                   "payload itself (JSON, or a form as Slack sends it).",
    "content": {
        "application/json": {"schema": {"anyOf": [
            {"$ref": "#/components/schemas/SendEvent"},
            {"type": "object", "description": f"{_SIGNED}."}]}},
        "application/x-www-form-urlencoded": {"schema": {
            "type": "object", "additionalProperties": {"type": "string"},
            "description": f"{_SIGNED}, as a form (Slack's)."}}}}}
"""What the route reads by hand: its body, and a bearer token unless the type is signed."""


@router.post("/{event}", status_code=202, response_model=EventDocument,
             openapi_extra=_SEND, responses={**error_responses(400, 404, 422), **_HANDSHAKE})
async def send_event(event_type: TypeToSend, request: Request,
                     engine: EngineDep) -> dict[str, Any] | JSONResponse:
    """Send an event: delivered to every run waiting on its correlation, else buffered (or
    unmatched). 202 once it is durable.

    The body is ``{data, id?}`` (``id``, else the ``Idempotency-Key`` header, dedups). A type
    that declares ``secret_env`` takes the signed payload itself instead, with no bearer
    token (``X-Tarry-Signature``, ``X-Hub-Signature-256`` or ``X-Slack-Signature``);
    GitHub's ``ping`` and Slack's ``url_verification`` are answered 200 and record nothing.
    """
    manifest = engine.manifest(event_type)
    body = await request.body()
    if manifest.signature is None:
        principal_of_request(request)
        data, event_id = _envelope(body, request.headers.get("idempotency-key"))
    else:
        _check_signature(request, event_type, manifest.signature, body)
        scheme = manifest.signature
        data = signed_payload(scheme, body, request.headers.get("content-type", ""))
        answer = handshake(scheme, request.headers, data)
        if answer is not None:
            return JSONResponse(answer)
        event_id = delivery_id(scheme, request.headers, data)
        data = sender_fields(scheme, request.headers, data)
    record = await engine.aio.send(event_type, data, id=event_id)  # concurrent sends: one commit
    return _answer(request, record)


@router.get("", response_model=EventList, dependencies=_OPERATOR,
            responses=error_responses(400, 422))
async def list_events(
        *, engine: EngineDep,
        state: Annotated[EventState | None, Query(description="Only events in this state.")]
        = None,
        type: Annotated[str | None, Query(max_length=512)] = None,
        cursor: Cursor = None, limit: Limit = 50) -> dict[str, Any]:
    """The inbox: events newest first, in keyset pages (a lapsed buffer shows unmatched)."""
    after = decode_cursor(cursor, 2)
    position = (after[0], after[1][0], after[1][1]) if after else None
    records = await off_loop(engine, engine.store.list_events, state=state, type=type,
                             after=position, now=engine.clock.now(), limit=limit + 1)
    page = records[:limit]
    last = page[-1] if len(records) > limit else None
    return {"events": [event_document(record) for record in page],
            "next_cursor": encode_cursor(last.received_at, last.type, last.id) if last
            else None}


@router.get("/{event}", response_model=EventDocument, dependencies=_OPERATOR,
            responses=error_responses(404, 409, 422))
async def get_event(event_id: IdToRead, engine: EngineDep) -> dict[str, Any]:
    """One event (409 when several types have an event with that id)."""
    return event_document(await off_loop(engine, engine.store.get_event, event_id))


@router.post("/{event_id}/redeliver", response_model=EventDocument, dependencies=_OPERATOR,
             responses=error_responses(400, 404, 409, 422))
async def redeliver_event(event_id: EventId, request: Request, engine: EngineDep,
                          body: RedeliverEvent | None = None) -> dict[str, Any]:
    """Deliver a quarantined, unmatched or buffered event again, optionally with a corrected
    payload; 422 (kept in the quarantine) when it is still invalid."""
    data = body.data if body is not None else None
    return _answer(request, await engine.aio.redeliver(event_id, data))


@router.post("/{event_id}/discard", response_model=EventDocument, dependencies=_OPERATOR,
             responses=error_responses(404, 409, 422))
async def discard_event(event_id: EventId, engine: EngineDep) -> dict[str, Any]:
    """Discard a quarantined, unmatched or buffered event."""
    return event_document(await off_loop(engine, engine.discard, event_id))


def _envelope(body: bytes, header_id: str | None) -> tuple[Any, str | None]:
    try:
        envelope = SendEvent.model_validate_json(body or b"null")
    except ValidationError as exc:
        if any(error["type"] == "json_invalid" for error in exc.errors()):
            raise ApiError(400, "the request body is not valid JSON") from None
        raise RequestValidationError(jsonable_encoder(
            [{**error, "loc": ("body", *error["loc"])} for error in exc.errors()])) from None
    return envelope.data, envelope.id or header_id


def _check_signature(request: Request, event_type: str, scheme: str, body: bytes) -> None:
    """Accept a signed delivery, or refuse it (401): logged on ``tarry.server.webhooks``
    with its reason and counted in ``tarry_webhooks_refused_total``."""
    secret = request.app.state.secrets[event_type]
    now = request.app.state.engine.clock.now()
    try:
        verify(scheme, secret, body, request.headers, now)
    except SignatureRejected as exc:
        request.app.state.metrics.webhooks_refused.labels(exc.reason).inc()
        webhook_logger.warning("webhook refused for event type %s (%s): %s", event_type,
                               exc.reason, exc.message,
                               extra={"fields": {"event_type": event_type, "scheme": scheme,
                                                 "reason": exc.reason}})
        raise ApiError(401, exc.message, details={"signature": scheme}) from None


def _answer(request: Request, record: EventRecord) -> dict[str, Any]:
    request.app.state.metrics.events.labels(record.state.value).inc()
    document = event_document(record)
    if record.state is EventState.INVALID:
        raise ApiError(422, f"the event is invalid and was quarantined (id {record.id}): "
                            + "; ".join(record.errors),
                       details={"event": document, "errors": list(record.errors)})
    if record.state is EventState.DELIVERED:
        wake_worker(request)
    return document

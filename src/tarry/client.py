"""Clients of a ``tarry serve`` HTTP API, for services that start runs and send events
without access to the database::

    from tarry import Client

    with Client("https://tarry.example.com", token="…") as tarry:
        run = tarry.start("deal-approval", {"deal": {"name": "ACME"}},
                          idempotency_key="deal-ACME")
        tarry.send("slack.approval", {"message": "1700.1", "approved": True})
        print(tarry.get(run["id"])["status"])

:class:`AsyncClient` has the same methods as coroutines. Every method returns the JSON
document the API answers with (the run and event documents; a page is
``{"runs" | "events": [...], "next_cursor": ...}``). A refusal raises :class:`ApiError`
with the status, the error ``type``, the message and the ``details`` of the API's one error
shape. The request is built once (:class:`_Call`) and sent by either client, so the two
cannot drift.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType
from typing import Any, Self
from urllib.parse import quote

import httpx

from tarry.errors import TarryError

__all__ = ["ApiError", "AsyncClient", "Client"]

Document = dict[str, Any]
_DEFAULT_TIMEOUT = 30.0


class ApiError(TarryError):
    """The server refused a request: ``status`` (HTTP), ``type`` (``not_found``,
    ``conflict``, ``invalid``, …), the server's message and its structured ``details``."""

    def __init__(self, status: int, type: str, message: str,
                 details: Mapping[str, Any] | None = None) -> None:
        self.status = status
        self.type = type
        self.message = message
        self._details = dict(details or {})
        super().__init__(f"{status} {type}: {message}")

    @property
    def details(self) -> dict[str, Any]:
        """What the server's error said beyond its message."""
        return dict(self._details)


@dataclass(frozen=True)
class _Call:
    """One API request, independent of how it is sent."""

    method: str
    path: str
    json: Any = None
    params: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    def options(self) -> dict[str, Any]:
        """The keyword arguments of ``httpx`` ``request``."""
        options: dict[str, Any] = {"params": {k: v for k, v in self.params.items()
                                              if v is not None}}
        if self.json is not None:
            options["json"] = self.json
        if self.headers:
            options["headers"] = self.headers
        return options


def _segment(value: str) -> str:
    return quote(value, safe="")


def _start(flow: str, inputs: Mapping[str, Any] | None, target: str | None,
           hold_after: datetime | None, idempotency_key: str | None) -> _Call:
    body: dict[str, Any] = {"flow": flow, "inputs": dict(inputs or {})}
    if target is not None:
        body["target"] = target
    if hold_after is not None:
        body["hold_after"] = hold_after.isoformat()
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
    return _Call("POST", "/v1/runs", body, headers=headers)


def _runs(**params: Any) -> _Call:
    return _Call("GET", "/v1/runs", params=params)


def _cancel(run_id: str, reason: str | None) -> _Call:
    return _Call("POST", f"/v1/runs/{_segment(run_id)}/cancel",
                 json={"reason": reason} if reason else None)


def _retry(run_id: str, reason: str | None, inputs: Mapping[str, Any] | None) -> _Call:
    return _Call("POST", f"/v1/runs/{_segment(run_id)}/retry",
                 json={"reason": reason, "inputs": dict(inputs or {})})


def _rerun(run_id: str, inputs: Mapping[str, Any] | None) -> _Call:
    return _Call("POST", f"/v1/runs/{_segment(run_id)}/rerun",
                 json={"inputs": dict(inputs or {})})


def _batch(action: str, reason: str | None, filters: Mapping[str, str | None]) -> _Call:
    return _Call("POST", "/v1/runs/batch", json={
        "action": action, "reason": reason,
        "filter": {key: value for key, value in filters.items() if value is not None}})


def _send(type: str, data: Mapping[str, Any], id: str | None) -> _Call:
    body: dict[str, Any] = {"data": dict(data)}
    if id is not None:
        body["id"] = id
    return _Call("POST", f"/v1/events/{_segment(type)}", body)


def _events(state: str | None, type: str | None, cursor: str | None, limit: int) -> _Call:
    return _Call("GET", "/v1/events", params={"state": state, "type": type, "cursor": cursor,
                                              "limit": limit})


def _redeliver(event_id: str, data: Mapping[str, Any] | None) -> _Call:
    return _Call("POST", f"/v1/events/{_segment(event_id)}/redeliver",
                 {"data": dict(data)} if data is not None else {})


def _tasks(every: bool, mine: bool, limit: int) -> _Call:
    return _Call("GET", "/v1/tasks", params={"all": "true" if every else None,
                                             "mine": "true" if mine else None, "limit": limit})


def _complete(task_id: str, outcome: str, data: Mapping[str, Any] | None) -> _Call:
    return _Call("POST", f"/v1/tasks/{_segment(task_id)}/complete",
                 {"outcome": outcome, "data": dict(data or {})})


def _answer(response: httpx.Response) -> Document:
    """The response's JSON document, or the :class:`ApiError` it stands for."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.is_success and isinstance(body, dict):
        return body
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        raise ApiError(response.status_code, "unexpected",
                       f"the server answered {response.status_code} without tarry's error "
                       f"shape: {response.text[:200]!r}")
    raise ApiError(response.status_code, str(error.get("type")), str(error.get("message")),
                   error.get("details") or {})


def _client_options(url: str, token: str | None, timeout: float) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return {"base_url": url.rstrip("/"), "headers": headers, "timeout": timeout}


class Client:
    """A synchronous client of a tarry server at ``url`` (``token``: its bearer token).

    One client keeps its connections alive between calls; close it (or use ``with``).
    ``transport`` is httpx's, for tests or special networking.
    """

    def __init__(self, url: str, *, token: str | None = None,
                 timeout: float = _DEFAULT_TIMEOUT,
                 transport: httpx.BaseTransport | None = None) -> None:
        self._http = httpx.Client(**_client_options(url, token, timeout), transport=transport)

    def _call(self, call: _Call) -> Document:
        return _answer(self._http.request(call.method, call.path, **call.options()))

    def start(self, flow: str, inputs: Mapping[str, Any] | None = None, *,
              target: str | None = None, hold_after: datetime | None = None,
              idempotency_key: str | None = None) -> Document:
        """Start a run of ``flow``; its run document. With ``idempotency_key``, a retry
        returns the run the first call created."""
        return self._call(_start(flow, inputs, target, hold_after, idempotency_key))

    def get(self, run_id: str) -> Document:
        """The run document of ``run_id``, history included."""
        return self._call(_Call("GET", f"/v1/runs/{_segment(run_id)}"))

    def list(self, *, status: str | None = None, flow: str | None = None,
             target: str | None = None, waiting_for: str | None = None,
             at_step: str | None = None, cursor: str | None = None,
             limit: int = 50) -> Document:
        """One page of runs, newest first: ``{"runs": [...], "next_cursor": ...}``."""
        return self._call(_runs(status=status, flow=flow, target=target,
                                waiting_for=waiting_for, at_step=at_step, cursor=cursor,
                                limit=limit))

    def graph(self, flow: str) -> Document:
        """A YAML flow's drawing with the runs at each step: ``GET /v1/flows/{name}/graph``."""
        return self._call(_Call("GET", f"/v1/flows/{_segment(flow)}/graph"))

    def cancel(self, run_id: str, *, reason: str | None = None) -> Document:
        """Cancel a run, recording ``reason``; its run document (``ApiError`` 409 when it has
        already ended)."""
        return self._call(_cancel(run_id, reason))

    def retry(self, run_id: str, *, reason: str | None = None,
              inputs: Mapping[str, Any] | None = None) -> Document:
        """Retry a failed run from the step that failed, ``inputs`` replacing those of the
        same names; its run document (``ApiError`` 409 unless it failed)."""
        return self._call(_retry(run_id, reason, inputs))

    def rerun(self, run_id: str, *, inputs: Mapping[str, Any] | None = None) -> Document:
        """Start a new run of the run's flow with its inputs and target (``inputs`` replacing
        those of the same names), linked to it; the new run's document."""
        return self._call(_rerun(run_id, inputs))

    def batch(self, action: str, *, reason: str | None = None, flow: str | None = None,
              status: str | None = None, waiting_for: str | None = None,
              target: str | None = None, older_than: str | None = None) -> Document:
        """``cancel`` or ``retry`` every run the filters select, in the background; the
        batch document, whose counts :meth:`get_batch` follows."""
        return self._call(_batch(action, reason, {
            "flow": flow, "status": status, "waiting_for": waiting_for, "target": target,
            "older_than": older_than}))

    def get_batch(self, batch_id: str) -> Document:
        """The batch document of ``batch_id``, its counts so far."""
        return self._call(_Call("GET", f"/v1/batches/{_segment(batch_id)}"))

    def held(self, *, cursor: str | None = None, limit: int = 50) -> Document:
        """One page of held runs: ``{"runs": [...], "next_cursor": ...}``."""
        return self._call(_Call("GET", "/v1/held", params={"cursor": cursor, "limit": limit}))

    def send(self, type: str, data: Mapping[str, Any], *, id: str | None = None) -> Document:
        """Send an event; its event document once it is durable (``ApiError`` 422 when it
        is invalid and was quarantined). ``id`` dedups."""
        return self._call(_send(type, data, id))

    def events(self, *, state: str | None = None, type: str | None = None,
               cursor: str | None = None, limit: int = 50) -> Document:
        """One page of the inbox: ``{"events": [...], "next_cursor": ...}``."""
        return self._call(_events(state, type, cursor, limit))

    def redeliver(self, event_id: str, data: Mapping[str, Any] | None = None) -> Document:
        """Deliver a quarantined, unmatched or buffered event again, optionally corrected."""
        return self._call(_redeliver(event_id, data))

    def discard(self, event_id: str) -> Document:
        """Discard a quarantined, unmatched or buffered event."""
        return self._call(_Call("POST", f"/v1/events/{_segment(event_id)}/discard"))

    def tasks(self, *, every: bool = False, mine: bool = False, limit: int = 100) -> Document:
        """Tasks for people, newest first: ``{"tasks": [...]}`` — the open ones, or with
        ``every`` all of them; with ``mine``, only those this client's principal may
        complete."""
        return self._call(_tasks(every, mine, limit))

    def complete_task(self, task_id: str, outcome: str,
                      data: Mapping[str, Any] | None = None) -> Document:
        """Complete a task as this client's principal; its task document (``ApiError`` 403
        when it is assigned to others, 422 with every reason when the outcome or data do not
        fit, 409 when it is no longer open)."""
        return self._call(_complete(task_id, outcome, data))

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


class AsyncClient:
    """The asynchronous twin of :class:`Client`: the same methods, awaited."""

    def __init__(self, url: str, *, token: str | None = None,
                 timeout: float = _DEFAULT_TIMEOUT,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._http = httpx.AsyncClient(**_client_options(url, token, timeout),
                                       transport=transport)

    async def _call(self, call: _Call) -> Document:
        return _answer(await self._http.request(call.method, call.path, **call.options()))

    async def start(self, flow: str, inputs: Mapping[str, Any] | None = None, *,
                    target: str | None = None, hold_after: datetime | None = None,
                    idempotency_key: str | None = None) -> Document:
        """See :meth:`Client.start`."""
        return await self._call(_start(flow, inputs, target, hold_after, idempotency_key))

    async def get(self, run_id: str) -> Document:
        """See :meth:`Client.get`."""
        return await self._call(_Call("GET", f"/v1/runs/{_segment(run_id)}"))

    async def list(self, *, status: str | None = None, flow: str | None = None,
                   target: str | None = None, waiting_for: str | None = None,
                   at_step: str | None = None, cursor: str | None = None,
                   limit: int = 50) -> Document:
        """See :meth:`Client.list`."""
        return await self._call(_runs(status=status, flow=flow, target=target,
                                      waiting_for=waiting_for, at_step=at_step,
                                      cursor=cursor, limit=limit))

    async def graph(self, flow: str) -> Document:
        """See :meth:`Client.graph`."""
        return await self._call(_Call("GET", f"/v1/flows/{_segment(flow)}/graph"))

    async def cancel(self, run_id: str, *, reason: str | None = None) -> Document:
        """See :meth:`Client.cancel`."""
        return await self._call(_cancel(run_id, reason))

    async def retry(self, run_id: str, *, reason: str | None = None,
                    inputs: Mapping[str, Any] | None = None) -> Document:
        """See :meth:`Client.retry`."""
        return await self._call(_retry(run_id, reason, inputs))

    async def rerun(self, run_id: str, *, inputs: Mapping[str, Any] | None = None) -> Document:
        """See :meth:`Client.rerun`."""
        return await self._call(_rerun(run_id, inputs))

    async def batch(self, action: str, *, reason: str | None = None, flow: str | None = None,
                    status: str | None = None, waiting_for: str | None = None,
                    target: str | None = None, older_than: str | None = None) -> Document:
        """See :meth:`Client.batch`."""
        return await self._call(_batch(action, reason, {
            "flow": flow, "status": status, "waiting_for": waiting_for, "target": target,
            "older_than": older_than}))

    async def get_batch(self, batch_id: str) -> Document:
        """See :meth:`Client.get_batch`."""
        return await self._call(_Call("GET", f"/v1/batches/{_segment(batch_id)}"))

    async def held(self, *, cursor: str | None = None, limit: int = 50) -> Document:
        """See :meth:`Client.held`."""
        return await self._call(_Call("GET", "/v1/held",
                                      params={"cursor": cursor, "limit": limit}))

    async def send(self, type: str, data: Mapping[str, Any], *,
                   id: str | None = None) -> Document:
        """See :meth:`Client.send`."""
        return await self._call(_send(type, data, id))

    async def events(self, *, state: str | None = None, type: str | None = None,
                     cursor: str | None = None, limit: int = 50) -> Document:
        """See :meth:`Client.events`."""
        return await self._call(_events(state, type, cursor, limit))

    async def redeliver(self, event_id: str,
                        data: Mapping[str, Any] | None = None) -> Document:
        """See :meth:`Client.redeliver`."""
        return await self._call(_redeliver(event_id, data))

    async def discard(self, event_id: str) -> Document:
        """See :meth:`Client.discard`."""
        return await self._call(_Call("POST", f"/v1/events/{_segment(event_id)}/discard"))

    async def tasks(self, *, every: bool = False, mine: bool = False,
                    limit: int = 100) -> Document:
        """See :meth:`Client.tasks`."""
        return await self._call(_tasks(every, mine, limit))

    async def complete_task(self, task_id: str, outcome: str,
                            data: Mapping[str, Any] | None = None) -> Document:
        """See :meth:`Client.complete_task`."""
        return await self._call(_complete(task_id, outcome, data))

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self.aclose()

"""Many clients at once over a real socket, on every store: concurrent starts and sends share
transactions (group commit), and each still gets its own answer, nothing is lost or made
twice, and one bad request fails only itself."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import httpx
from server_support import Served, eventually, start

from tarry.model import RunStatus

CLIENTS = 8
"""Clients sending at once, each on its own connection."""
EACH = 12
"""Requests each client sends, one after another."""

T = TypeVar("T")


def _at_once(served: Served, work: Callable[[httpx.Client, int], T]) -> list[T]:
    """``work(client, number)`` in :data:`CLIENTS` threads, each with its own HTTP
    connection, released together; their results, by number."""
    ready = threading.Barrier(CLIENTS)

    def one(number: int) -> T:
        with served.client() as client:
            client.get("/healthz")  # the connection is open before the race begins
            ready.wait(timeout=10)
            return work(client, number)

    with ThreadPoolExecutor(CLIENTS) as pool:
        return list(pool.map(one, range(CLIENTS)))


def _flat(nested: Sequence[Sequence[T]]) -> list[T]:
    return [item for items in nested for item in items]


def _send(client: httpx.Client, deal: str, **extra: Any) -> httpx.Response:
    return client.post("/v1/events/deal.approved",
                       json={"data": {"deal": deal, "approved": True}, **extra})


def test_concurrent_starts_each_answer_their_own_run_and_every_run_is_stored(
        served: Served) -> None:
    def starts(client: httpx.Client, number: int) -> list[tuple[str, dict[str, Any]]]:
        return [(f"c{number}-{index}", start(client, "approval",
                                             inputs={"deal": f"c{number}-{index}"}))
                for index in range(EACH)]

    answered = _flat(_at_once(served, starts))
    assert all(document["inputs"] == {"deal": deal} for deal, document in answered)
    ids = {document["id"] for _, document in answered}
    assert len(ids) == CLIENTS * EACH
    stored = served.engine.store.list_runs(flow="approval", limit=1000)
    assert {record.id for record in stored} == ids


def test_a_refused_start_among_concurrent_ones_fails_only_itself(served: Served) -> None:
    def starts(client: httpx.Client, number: int) -> list[int]:
        inputs = [{} if (number + index) % 5 == 0 else {"deal": f"c{number}-{index}"}
                  for index in range(EACH)]
        return [client.post("/v1/runs", json={"flow": "approval", "inputs": each}).status_code
                for each in inputs]

    statuses = _flat(_at_once(served, starts))
    refused = statuses.count(422)
    assert refused == sum((number + index) % 5 == 0
                          for number in range(CLIENTS) for index in range(EACH))
    assert statuses.count(201) == len(statuses) - refused
    assert served.engine.store.count_runs(flow="approval") == len(statuses) - refused


def test_concurrent_retries_of_one_idempotent_start_make_one_run(served: Served) -> None:
    def retry(client: httpx.Client, _: int) -> httpx.Response:
        return client.post("/v1/runs", json={"flow": "approval", "inputs": {"deal": "once"}},
                           headers={"Idempotency-Key": "order-7"})

    responses = _at_once(served, retry)
    assert {response.status_code for response in responses} == {201}
    assert len({response.json()["id"] for response in responses}) == 1
    assert sorted(response.headers["Idempotent-Replayed"] for response in responses) == (
        ["false"] + ["true"] * (CLIENTS - 1))
    assert served.engine.store.count_runs(flow="approval") == 1


def test_concurrent_sends_each_reach_the_run_waiting_for_them(served: Served) -> None:
    with served.client() as client:
        runs = {f"c{number}-{index}": start(client, "approval",
                                            inputs={"deal": f"c{number}-{index}"})["id"]
                for number in range(CLIENTS) for index in range(EACH)}
    store = served.engine.store
    assert eventually(lambda: store.count_runs(status=RunStatus.WAITING) == len(runs))

    def sends(client: httpx.Client, number: int) -> list[tuple[str, httpx.Response]]:
        return [(deal, _send(client, deal)) for deal in runs if deal.startswith(f"c{number}-")]

    answered = _flat(_at_once(served, sends))
    assert {(response.status_code, response.json()["state"]) for _, response in answered} == {
        (202, "delivered")}
    assert all(response.json()["runs"] == [runs[deal]] for deal, response in answered)
    assert eventually(lambda: store.count_runs(status=RunStatus.SUCCEEDED) == len(runs))


def test_one_event_id_sent_by_many_clients_at_once_is_recorded_once(served: Served) -> None:
    with served.client() as client:
        run_id = start(client, "approval", inputs={"deal": "d1"})["id"]
    store = served.engine.store
    assert eventually(lambda: store.get_run(run_id).status is RunStatus.WAITING)

    responses = _at_once(served, lambda client, _: _send(client, "d1", id="same-event"))
    states = sorted(response.json()["state"] for response in responses)
    assert {response.status_code for response in responses} == {202}
    assert states == ["delivered"] + ["duplicate"] * (CLIENTS - 1)
    assert all(response.json()["runs"] == [run_id] for response in responses)
    assert eventually(lambda: store.get_run(run_id).status is RunStatus.SUCCEEDED)

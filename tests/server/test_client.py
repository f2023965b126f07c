"""``tarry.Client`` and ``tarry.AsyncClient`` against a real server, on every store."""

from __future__ import annotations

from pathlib import Path

import pytest
from server_support import Served, serve, status_becomes

from tarry import ApiError, AsyncClient, Client


def test_the_client_starts_lists_sends_and_reads_a_run(served: Served) -> None:
    with Client(served.url) as tarry, served.client() as http:
        run = tarry.start("approval", {"deal": "d1"}, target="t1", idempotency_key="k1")
        assert tarry.start("approval", {"deal": "d1"}, target="t1",
                           idempotency_key="k1")["id"] == run["id"]
        assert status_becomes(http, run["id"], "waiting")
        assert [r["id"] for r in tarry.list(waiting_for="deal.approved")["runs"]] == [run["id"]]
        sent = tarry.send("deal.approved", {"deal": "d1", "approved": True}, id="e1")
        assert (sent["state"], sent["runs"]) == ("delivered", [run["id"]])
        assert status_becomes(http, run["id"], "succeeded")
        assert tarry.get(run["id"])["exit"] == "decided"
        assert [e["id"] for e in tarry.events(state="delivered")["events"]] == ["e1"]


def test_the_client_works_the_inbox_and_cancels(served: Served) -> None:
    with Client(served.url) as tarry, served.client() as http:
        with pytest.raises(ApiError) as caught:
            tarry.send("deal.approved", {"deal": "d1"}, id="bad")
        assert (caught.value.status, caught.value.type) == (422, "invalid")
        assert caught.value.details["event"]["state"] == "invalid"
        assert tarry.redeliver("bad", {"deal": "d1", "approved": True})["state"] == "buffered"
        run = tarry.start("nap")
        assert status_becomes(http, run["id"], "waiting")
        assert tarry.cancel(run["id"])["status"] == "cancelled"
        assert tarry.held()["runs"] == []


def test_a_refusal_is_an_api_error_with_the_servers_shape(served: Served) -> None:
    with Client(served.url) as tarry, pytest.raises(ApiError) as caught:
        tarry.get("nope")
    assert str(caught.value) == "404 not_found: no run with id 'nope'"
    assert caught.value.details == {"kind": "run", "key": "nope"}


def test_a_wrong_token_is_an_api_error_401(project: Path) -> None:
    with serve(project, {"TARRY_API_TOKEN": "right"}) as server, \
            Client(server.url, token="wrong") as tarry, pytest.raises(ApiError) as caught:
        tarry.list()
    assert (caught.value.status, caught.value.type) == (401, "unauthorized")


async def test_the_async_client_has_the_same_calls(served: Served) -> None:
    async with AsyncClient(served.url) as tarry:
        run = await tarry.start("nap", target="async")
        with served.client() as http:
            assert status_becomes(http, run["id"], "waiting")
        assert (await tarry.get(run["id"]))["target"] == "async"
        assert [r["id"] for r in (await tarry.list(target="async"))["runs"]] == [run["id"]]
        event = await tarry.send("deal.approved", {"deal": "d9", "approved": True})
        assert (await tarry.discard(event["id"]))["state"] == "discarded"
        assert (await tarry.events(type="deal.approved"))["events"][0]["id"] == event["id"]
        assert (await tarry.cancel(run["id"]))["status"] == "cancelled"
        assert (await tarry.held())["next_cursor"] is None


def test_the_client_operates_runs(served: Served) -> None:
    with Client(served.url) as tarry, served.client() as http:
        napping = [tarry.start("nap", target="drill")["id"] for _ in range(2)]
        tarry.cancel(napping[0], reason="not needed")  # a run the worker holds: at its checkpoint
        assert status_becomes(http, napping[0], "cancelled")
        cancelled = tarry.get(napping[0])
        assert [e["data"] for e in cancelled["history"] if e["kind"] == "cancelled"] == [
            {"by": "anonymous", "reason": "not needed"}]
        rerun = tarry.rerun(napping[0])
        assert rerun["rerun_of"] == napping[0]
        with pytest.raises(ApiError) as caught:
            tarry.retry(napping[1], reason="why not")
        assert (caught.value.status, caught.value.type) == (409, "conflict")
        batch = tarry.batch("cancel", target="drill", reason="drill over")
        assert (batch["action"], batch["total"]) == ("cancel", 2)  # the second and the rerun
        assert status_becomes(http, napping[1], "cancelled")
        assert tarry.get_batch(batch["id"])["reason"] == "drill over"


async def test_the_async_client_operates_runs(served: Served) -> None:
    async with AsyncClient(served.url) as tarry:
        run = await tarry.start("nap")
        assert (await tarry.cancel(run["id"], reason="async"))["status"] == "cancelled"
        rerun = await tarry.rerun(run["id"], inputs={})
        assert rerun["rerun_of"] == run["id"]
        with pytest.raises(ApiError):
            await tarry.retry(rerun["id"])
        batch = await tarry.batch("retry", flow="nap")
        assert (batch["total"], (await tarry.get_batch(batch["id"]))["action"]) == (0, "retry")

"""Operating runs over a real socket, on every store: retry, rerun, cancel with a reason, and
batches whose counts advance (``POST /v1/runs/batch``, ``GET /v1/batches/{id}``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_support import FLOWS, Served, eventually, serve, start, status_becomes, write_project

from operate_support import FLAKY_FLOW
from tarry.model import BatchAction, BatchFilter

BUSY_FLOW = """\
flow: busy
steps:
  - poll:
      repeat: { max: 20, every: 20ms, until: "{{ false }}" }
      steps:
        - tick: { set: { at: "{{ loop.index }}" } }
"""


@pytest.fixture
def served(tmp_path: Path, store_url: str) -> Iterator[Served]:
    root = write_project(tmp_path / "project", store_url,
                         flows={**FLOWS, "flaky": FLAKY_FLOW, "busy": BUSY_FLOW})
    with serve(root) as server:
        yield server


def _error(response: httpx.Response) -> tuple[int, str, str]:
    body = response.json()["error"]
    return response.status_code, body["type"], body["message"]


def failed(client: httpx.Client) -> str:
    run_id = str(start(client, "flaky")["id"])
    assert status_becomes(client, run_id, "failed")
    return run_id


def kinds(document: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [entry for entry in document["history"] if entry["kind"] == kind]


def test_a_failed_run_retried_with_corrected_inputs_succeeds_without_rerunning_steps(
        served: Served) -> None:
    with served.client() as client:
        run_id = failed(client)
        response = client.post(f"/v1/runs/{run_id}/retry",
                               json={"reason": "fixed upstream", "inputs": {"fine": True}})
        assert response.status_code == 200, response.text
        assert response.json()["status"] in ("pending", "running", "succeeded")
        assert status_becomes(client, run_id, "succeeded")
        document = client.get(f"/v1/runs/{run_id}").json()
    assert (document["exit"], document["attempt"], document["inputs"]) == ("fine", 2,
                                                                           {"fine": True})
    assert len(kinds(document, "log")) == 1
    assert [entry["data"] for entry in kinds(document, "retried")] == [
        {"by": "anonymous", "reason": "fixed upstream", "inputs": ["fine"]}]


def test_retrying_a_run_that_has_not_failed_is_a_409(served: Served) -> None:
    with served.client() as client:
        run_id = start(client, "nap")["id"]
        assert status_becomes(client, run_id, "waiting")
        response = client.post(f"/v1/runs/{run_id}/retry")
    assert _error(response) == (409, "conflict", f"run {run_id} is waiting: only a failed run "
                                                 "can be retried (rerun starts a new run of "
                                                 "any run)")


def test_retry_refuses_inputs_the_flow_does_not_take_and_unknown_runs(served: Served) -> None:
    with served.client() as client:
        run_id = failed(client)
        bad = client.post(f"/v1/runs/{run_id}/retry", json={"inputs": {"fien": True}})
        missing = client.post("/v1/runs/nope/retry")
        still = client.get(f"/v1/runs/{run_id}").json()["status"]
    assert bad.status_code == 422
    assert "fien" in bad.json()["error"]["message"]
    assert _error(missing) == (404, "not_found", "no run with id 'nope'")
    assert still == "failed"


def test_a_rerun_is_a_new_linked_run_answered_201(served: Served) -> None:
    with served.client() as client:
        first = start(client, "quick", target="acme/web#7")["id"]
        response = client.post(f"/v1/runs/{first}/rerun")
        assert response.status_code == 201, response.text
        rerun = response.json()
        assert status_becomes(client, rerun["id"], "succeeded")
        original = client.get(f"/v1/runs/{first}").json()
    assert (rerun["rerun_of"], rerun["target"], rerun["flow"]) == (first, "acme/web#7", "quick")
    assert original["reruns"] == [rerun["id"]]


def test_cancel_takes_a_reason_in_its_body_and_still_works_without_one(
        served: Served) -> None:
    with served.client() as client:
        with_reason = start(client, "nap")["id"]
        without = start(client, "nap")["id"]
        cancelled = client.post(f"/v1/runs/{with_reason}/cancel",
                                json={"reason": "customer withdrew"})
        plain = client.post(f"/v1/runs/{without}/cancel")
        too_long = client.post(f"/v1/runs/{without}/cancel", json={"reason": "x" * 1025})
    assert (cancelled.status_code, plain.status_code) == (200, 200)
    assert [e["data"] for e in kinds(cancelled.json(), "cancelled")] == [
        {"by": "anonymous", "reason": "customer withdrew"}]
    assert [e["data"] for e in kinds(plain.json(), "cancelled")] == [{"by": "anonymous"}]
    assert too_long.status_code == 422


def test_a_bulk_cancel_answers_202_and_its_counts_advance_to_the_end(served: Served) -> None:
    with served.client() as client:
        napping = [start(client, "nap", target="eu")["id"] for _ in range(5)]
        other = start(client, "nap", target="us")["id"]
        response = client.post("/v1/runs/batch", json={
            "action": "cancel", "filter": {"flow": "nap", "target": "eu"}, "reason": "drill"})
        assert response.status_code == 202, response.text
        batch = response.json()
        assert (batch["action"], batch["total"], batch["by"]) == ("cancel", 5, "anonymous")
        assert eventually(lambda: client.get(f"/v1/batches/{batch['id']}").json()["state"]
                          == "done")
        done = client.get(f"/v1/batches/{batch['id']}").json()
        statuses = {client.get(f"/v1/runs/{run}").json()["status"] for run in napping}
        untouched = client.get(f"/v1/runs/{other}").json()["status"]
    assert (done["acted"], done["skipped"], done["reason"]) == (5, 0, "drill")
    assert statuses == {"cancelled"}
    assert untouched != "cancelled"


def test_a_bulk_cancel_of_runs_the_worker_is_running_ends_every_one(served: Served) -> None:
    """The batch's transactions and the worker's checkpoints take the same runs' locks:
    neither waits for ever, and no run is left in between."""
    with served.client() as client:
        runs = [start(client, "busy")["id"] for _ in range(60)]
        response = client.post("/v1/runs/batch", json={"action": "cancel",
                                                       "filter": {"flow": "busy"}})
        assert response.status_code == 202, response.text
        batch_id = response.json()["id"]
        assert eventually(lambda: client.get(f"/v1/batches/{batch_id}").json()["state"]
                          == "done")
        assert eventually(lambda: all(
            client.get(f"/v1/runs/{run}").json()["status"] in ("cancelled", "failed")
            for run in runs), timeout=20)
        batch = client.get(f"/v1/batches/{batch_id}").json()
        statuses = [client.get(f"/v1/runs/{run}").json()["status"] for run in runs]
    assert batch["acted"] + batch["skipped"] <= 60  # the failed ones had ended before
    # a running run is asked to stop; one that ends at that very checkpoint ends as it ends
    assert 0 < statuses.count("cancelled") <= batch["acted"]


def test_a_bulk_retry_retries_the_failed_runs(served: Served) -> None:
    with served.client() as client:
        runs = [failed(client) for _ in range(2)]
        response = client.post("/v1/runs/batch", json={"action": "retry",
                                                       "filter": {"flow": "flaky"}})
        assert response.status_code == 202, response.text
        batch_id = response.json()["id"]
        assert eventually(lambda: client.get(f"/v1/batches/{batch_id}").json()["state"]
                          == "done")
        documents = [client.get(f"/v1/runs/{run}").json() for run in runs]
    assert all(len(kinds(document, "retried")) == 1 for document in documents)


@pytest.mark.parametrize(("body", "expected"), [
    ({"action": "pause"}, 422),
    ({"action": "cancel", "filter": {"older_than": "soon"}}, 422),
    ({"action": "retry", "filter": {"status": "waiting"}}, 422),
    ({"action": "cancel", "filter": {"colour": "red"}}, 422),
])
def test_a_bad_batch_request_is_refused(served: Served, body: dict[str, Any],
                                        expected: int) -> None:
    with served.client() as client:
        response = client.post("/v1/runs/batch", json=body)
    assert response.status_code == expected
    assert response.json()["error"]["type"] == "invalid"


def test_an_unknown_batch_is_a_404(served: Served) -> None:
    with served.client() as client:
        response = client.get("/v1/batches/nope")
    assert _error(response) == (404, "not_found", "no batch with id 'nope'")


def test_a_batch_a_stopped_server_left_unfinished_is_resumed_by_the_next(
        tmp_path: Path, store_url: str) -> None:
    root = write_project(tmp_path / "project", store_url)
    with serve(root, worker=False) as first:
        with first.client() as client:
            runs = [start(client, "nap")["id"] for _ in range(3)]
        batch = first.engine.batch(BatchAction.CANCEL, BatchFilter(), by="api")  # not worked
    with serve(root, worker=False) as second, second.client() as client:
        assert eventually(lambda: client.get(f"/v1/batches/{batch.id}").json()["state"]
                          == "done")
        assert {client.get(f"/v1/runs/{run}").json()["status"] for run in runs} == {
            "cancelled"}


def test_the_runs_waiting_in_a_flow_move_to_its_fixed_file(served: Served,
                                                            tmp_path: Path) -> None:
    flow_file = tmp_path / "project" / "flows" / "nap.yaml"
    original = flow_file.read_text()
    with served.client() as client:
        run_id = start(client, "nap")["id"]
        assert status_becomes(client, run_id, "waiting")
        flow_file.write_text(original + "  - after: { set: { moved: true } }\n")
        dry = client.post("/v1/runs/migrate", json={"flow": "nap", "dry_run": True})
        moved = client.post("/v1/runs/migrate", json={"flow": "nap", "dry_run": False})
        document = client.get(f"/v1/runs/{run_id}").json()
        flow_file.write_text(original.replace("- nap:", "- naps:"))
        refused = client.post("/v1/runs/migrate", json={"flow": "nap", "dry_run": True})
    assert dry.status_code == 200, dry.text
    assert [(run["id"], run["outcome"]) for run in dry.json()["runs"]] == [(run_id, "moves")]
    assert moved.status_code == 200, moved.text
    [run] = moved.json()["runs"]
    assert (run["outcome"], run["status"], run["reasons"]) == ("moved", "waiting", [])
    assert moved.json()["counts"] == {"moves": 0, "moved": 1, "cannot move": 0, "skipped": 0}
    [entry] = kinds(document, "migrated")
    assert entry["data"] == {"from": run["from"], "to": moved.json()["to"], "by": "anonymous"}
    assert document["status"] == "waiting"
    assert refused.status_code == 200
    assert [(r["outcome"], r["reasons"]) for r in refused.json()["runs"]] == [
        ("cannot move", ["step 'nap' is not in the new definition (did you mean 'naps'?)"])]


def test_moving_runs_names_a_flow_of_the_project_and_says_which_runs(served: Served) -> None:
    with served.client() as client:
        unknown = client.post("/v1/runs/migrate", json={"flow": "naps", "dry_run": True})
        path = client.post("/v1/runs/migrate",
                           json={"flow": "flows/nap.yaml", "dry_run": True})
        unsaid = client.post("/v1/runs/migrate", json={"flow": "nap"})
    assert _error(unknown)[:2] == (404, "not_found")
    assert "no flow named 'naps' among the project's flows" in _error(unknown)[2]
    assert _error(path)[:2] == (404, "not_found")
    assert unsaid.status_code == 422

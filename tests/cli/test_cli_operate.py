"""tarry retry, rerun and cancel (with a reason, and in bulk by the run list's filters),
in-process on a project's store, on both backends."""

from __future__ import annotations

import getpass
import json
import re

import pytest

from operate_support import FLAKY_FLOW

from .conftest import WAITING_FLOW, Project

RUN_ID = r"[0-9a-f]{32}"

@pytest.fixture
def flows(project: Project, store_url: str, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("TARRY_DATABASE", store_url)
    project.flow("cooling", WAITING_FLOW)
    project.flow("flaky", FLAKY_FLOW)
    return project


def failed_run(flows: Project, *args: str) -> str:
    """Run the flaky flow until it fails (``tarry run`` exits 1); its id."""
    result = flows.tarry("run", "flaky", *args, "--json")
    assert result.exit_code == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["status"] == "failed"
    return str(document["id"])


def test_retry_with_a_corrected_input_resumes_at_the_failed_step(flows: Project) -> None:
    run_id = failed_run(flows)

    result = flows.tarry("retry", run_id[:8], "-i", "fine=true", "--reason", "fixed the input")

    assert result.exit_code == 0, result.stderr
    assert result.stdout == (f"run {run_id} (flaky): pending; retried, a worker resumes it at "
                             "the step that failed\n")
    assert flows.tarry("worker", "--once").exit_code == 0
    document = flows.json("show", run_id)
    assert (document["status"], document["exit"], document["attempt"]) == ("succeeded", "fine", 2)
    assert document["inputs"] == {"fine": True}
    kinds = [entry["kind"] for entry in document["history"]]
    assert kinds.count("log") == 1  # the first step is not run again
    [retried] = [entry for entry in document["history"] if entry["kind"] == "retried"]
    assert retried["data"] == {"by": getpass.getuser(), "reason": "fixed the input",
                               "inputs": ["fine"]}
    shown = flows.tarry("show", run_id).stdout
    assert "attempt 2 (retried 1 time)" in shown
    assert 'reason="fixed the input"' in shown


def test_retrying_a_run_that_has_not_failed_exits_1_and_says_why(flows: Project) -> None:
    run_id = flows.json("run", "cooling")["id"]
    result = flows.tarry("retry", run_id)
    assert result.exit_code == 1
    assert result.stderr == (f"error: run {run_id} is waiting: only a failed run can be "
                             "retried (rerun starts a new run of any run)\n")


def test_retry_with_an_input_the_flow_does_not_take_exits_1(flows: Project) -> None:
    run_id = failed_run(flows)
    result = flows.tarry("retry", run_id, "-i", "fien=true")
    assert result.exit_code == 1
    assert "fien" in result.stderr
    assert flows.json("show", run_id)["status"] == "failed"


def test_rerun_starts_a_linked_run_with_the_same_inputs(flows: Project) -> None:
    first = failed_run(flows, "-i", "fine=false", "--target", "t-1")

    result = flows.tarry("rerun", first, "-i", "fine=true")

    assert result.exit_code == 0, result.stderr
    rerun = result.stdout.strip()
    assert re.fullmatch(RUN_ID, rerun)
    assert result.stderr == f"a rerun of {first}; a worker (tarry worker) executes it\n"
    flows.tarry("worker", "--once")
    document = flows.json("show", rerun)
    assert (document["status"], document["rerun_of"], document["target"]) == (
        "succeeded", first, "t-1")
    assert document["inputs"] == {"fine": True}
    assert flows.json("show", first)["reruns"] == [rerun]
    assert f"rerun as {rerun}" in flows.tarry("show", first).stdout


def test_cancel_records_the_reason(flows: Project) -> None:
    run_id = flows.json("run", "cooling")["id"]
    result = flows.tarry("cancel", run_id, "--reason", "no longer needed")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"run {run_id} (cooling): cancelled\n"
    [entry] = [e for e in flows.json("show", run_id)["history"] if e["kind"] == "cancelled"]
    assert entry["data"] == {"by": getpass.getuser(), "reason": "no longer needed"}


def test_bulk_cancel_counts_with_dry_run_and_acts_with_yes(flows: Project) -> None:
    waiting = [flows.json("start", "cooling", "--target", "eu")["id"] for _ in range(3)]
    other = flows.json("start", "cooling", "--target", "us")["id"]

    dry = flows.tarry("cancel", "--flow", "cooling", "--target", "eu", "--dry-run")
    assert (dry.exit_code, dry.stdout) == (0, "3 runs would be cancelled (dry run: nothing "
                                              "changed)\n")
    assert flows.json("cancel", "--target", "eu", "--dry-run") == {"action": "cancel",
                                                                    "count": 3}

    refused = flows.tarry("cancel", "--target", "eu")
    assert refused.exit_code == 2
    assert refused.stderr == ("error: this would cancel 3 runs; add --yes to do it, or "
                              "--dry-run to only count them\n")

    done = flows.json("cancel", "--target", "eu", "--yes", "--reason", "region drill")
    assert {key: done[key] for key in ("action", "state", "total", "acted", "skipped")} == {
        "action": "cancel", "state": "done", "total": 3, "acted": 3, "skipped": 0}
    assert done["reason"] == "region drill"
    assert {flows.json("show", run)["status"] for run in waiting} == {"cancelled"}
    assert flows.json("show", other)["status"] == "pending"
    again = flows.tarry("cancel", "--target", "eu", "--yes")
    assert again.stdout.startswith("cancelled 0 runs; batch ")


def test_bulk_retry_retries_every_failed_run_the_filters_select(flows: Project) -> None:
    failed = [failed_run(flows) for _ in range(2)]
    flows.json("start", "cooling")
    assert flows.tarry("retry", "--status", "failed", "--dry-run").stdout == (
        "2 runs would be retried (dry run: nothing changed)\n")

    result = flows.tarry("retry", "--flow", "flaky", "--yes", "--older-than", "0s")

    assert result.exit_code == 0, result.stderr
    assert re.fullmatch(r"retried 2 runs; batch [0-9a-f]{32}\n", result.stdout)
    assert {flows.json("show", run)["status"] for run in failed} == {"pending"}


@pytest.mark.parametrize(("args", "message"), [
    (["cancel"], "give a run id, or filters (--flow, --status, --waiting-for, --target, "
                 "--older-than) to act on every run they select"),
    (["cancel", "abc", "--flow", "x"], "give run ids or filters, not both"),
    (["retry", "abc", "--yes"], "--dry-run and --yes go with filters, not with run ids"),
    (["retry", "--flow", "x", "-i", "a=1", "--yes"],
     "corrected inputs (-i) go with run ids, not with filters"),
    (["cancel", "--older-than", "soon", "--dry-run"], "--older-than: "),
    (["retry", "--status", "waiting", "--dry-run"], None),
])
def test_bad_combinations_are_usage_errors(flows: Project, args: list[str],
                                           message: str | None) -> None:
    flows.json("start", "cooling")  # the store exists
    result = flows.tarry(*args)
    if message is None:  # a status the action never acts on: refused, with what it acts on
        assert result.exit_code == 1
        assert result.stderr == ("error: a retry acts on runs that are failed; a filter on "
                                 "status waiting selects none of them\n")
        return
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())

"""The waiting examples (examples/waiting) load, and run as their comments say on a virtual clock.

Each flow runs on the real engine and store through :class:`tarry.testing.Harness`, with the
example's own ``search.status`` action; the tests pin the outcome, the bindings and the virtual
instants at which each run woke.
"""

from __future__ import annotations

import importlib
import re
import shutil
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tarry.actions import ActionFunction
from tarry.cli import app
from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.language.loader import load_flow
from tarry.language.model import Flow
from tarry.model import RunStatus
from tarry.store import open_store
from tarry.testing import Harness

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "waiting"
FLOW_FILES = sorted((EXAMPLE / "flows").glob("*.yaml"))
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def example_flow(name: str) -> Flow:
    """The example flow ``flows/<name>.yaml``, loaded with the example's declared actions."""
    actions = load_settings(EXAMPLE).actions
    return load_flow(EXAMPLE / "flows" / f"{name}.yaml", actions=actions)


def stamp(delta: timedelta) -> str:
    """The run document's spelling of the instant ``delta`` after START."""
    return (START + delta).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def woke_at(document: dict[str, Any]) -> list[str]:
    """The instants at which the run was resumed after a suspension, in order."""
    return [entry["at"] for entry in document["history"] if entry["kind"] == "resumed"]


@pytest.fixture
def search_module(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The example's ``search_index`` module, imported from the example folder."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    return importlib.import_module("search_index")


@pytest.fixture
def actions(search_module: Any) -> dict[str, ActionFunction]:
    """The user actions the example's tarry.toml declares."""
    return {"search.status": search_module.status}


@pytest.fixture
def harness(tmp_path: Path, actions: dict[str, ActionFunction]) -> Iterator[Harness]:
    h = Harness(tmp_path, start=START, actions=actions)
    yield h
    h.close()


# --- loading ------------------------------------------------------------------------------------

def test_the_example_holds_the_four_flows() -> None:
    assert [path.name for path in FLOW_FILES] == [
        "account-deletion.yaml", "hello.yaml", "onboarding.yaml", "reindex-ticket.yaml"]


@pytest.mark.parametrize("path", FLOW_FILES, ids=lambda path: path.stem)
def test_every_example_flow_loads_under_its_file_name(path: Path) -> None:
    assert example_flow(path.stem).name == path.stem


@pytest.fixture
def fresh_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    """Undo changes to the import path, and import the example's module anew."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "search_index", raising=False)


@pytest.mark.usefixtures("fresh_imports")
def test_tarry_validate_accepts_the_example(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "waiting"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".tarry", "__pycache__"))
    monkeypatch.chdir(project)
    result = CliRunner().invoke(app, ["validate"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""


@pytest.mark.usefixtures("fresh_imports")
def test_the_engine_imports_the_example_action_from_the_project_root() -> None:
    engine = Engine.from_settings(load_settings(EXAMPLE), store=open_store("sqlite:///:memory:"))
    try:
        assert "search.status" in engine.actions
    finally:
        engine.close()


# --- hello: a three-second wait -----------------------------------------------------------------

async def test_hello_waits_three_seconds_then_exits_greeted(harness: Harness) -> None:
    run_id = harness.start(example_flow("hello"), {"name": "Ada"})
    await harness.run_due()
    assert harness.record(run_id).waiting_for == {
        "kind": "timer", "step": "nap", "until": stamp(timedelta(seconds=3)),
        "event_type": None, "match": None, "since": stamp(timedelta(0)), "others": 0}
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert (document["status"], document["exit"]) == ("succeeded", "greeted")
    assert document["bindings"] == {
        "greet": {"message": "Hello, Ada! Back in three seconds."},
        "nap": {"until": stamp(timedelta(seconds=3))},
        "back": {"message": f"Back from a nap that ended at {stamp(timedelta(seconds=3))}."},
    }
    assert woke_at(document) == [stamp(timedelta(seconds=3))]


# --- cooling_off: wait for 2d -------------------------------------------------------------------

async def test_account_deletion_waits_two_days_then_deletes(harness: Harness) -> None:
    run_id = harness.start(example_flow("account-deletion"),
                           {"account": "acct_42", "email": "ada@example.com"})
    await harness.advance(timedelta(days=2) - timedelta(milliseconds=1))
    assert harness.record(run_id).status is RunStatus.WAITING
    await harness.advance(timedelta(milliseconds=1))
    document = harness.document(run_id)
    two_days = stamp(timedelta(days=2))
    assert (document["status"], document["exit"]) == ("succeeded", "deleted")
    assert document["bindings"] == {
        "requested": {"message": "Deletion of acct_42 requested; it happens in two days "
                                 "unless cancelled."},
        "cooling_off": {"until": two_days},
        "deleted": {"account": "acct_42", "deleted_at": two_days},
        "notify": {"message": f"Told ada@example.com that acct_42 was deleted at {two_days}."},
    }
    assert woke_at(document) == [two_days]


async def test_cancelling_during_the_cooling_off_calls_the_deletion_off(
        harness: Harness) -> None:
    run_id = harness.start(example_flow("account-deletion"),
                           {"account": "acct_42", "email": "ada@example.com"})
    await harness.advance(timedelta(days=1))
    harness.engine.cancel(run_id, by="support")
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert document["status"] == "cancelled"
    assert list(document["bindings"]) == ["requested"]
    assert woke_at(document) == []


# --- day_before: wait until an instant computed from the input ----------------------------------

async def test_onboarding_reminds_the_day_before_in_the_flow_timezone(harness: Harness) -> None:
    hire = {"name": "Ada", "email": "ada@example.com", "start_date": "2026-03-04T09:00"}
    run_id = harness.start(example_flow("onboarding"), {"hire": hire})
    await harness.run_until_idle()
    document = harness.document(run_id)
    # 09:00 in Europe/Berlin (UTC+1 in March) is 08:00Z.
    day_before, first_morning = "2026-03-03T08:00:00.000Z", "2026-03-04T08:00:00.000Z"
    assert (document["status"], document["exit"]) == ("succeeded", "onboarded")
    assert document["bindings"] == {
        "accounts": {"message": "Create the accounts of Ada <ada@example.com>."},
        "day_before": {"until": day_before},
        "remind_team": {"message": "Tomorrow is Ada's first day."},
        "first_morning": {"until": first_morning},
        "welcome": {"message": "Welcome aboard, Ada!"},
    }
    assert woke_at(document) == [day_before, first_morning]


async def test_onboarding_a_hire_starting_tomorrow_reminds_at_once(harness: Harness) -> None:
    hire = {"name": "Ada", "email": "ada@example.com", "start_date": "2026-03-02T08:00:00Z"}
    run_id = harness.start(example_flow("onboarding"), {"hire": hire})
    await harness.run_due()
    record = harness.record(run_id)
    assert record.waiting_for is not None
    assert (record.waiting_for["step"], record.waiting_for["until"]) == (
        "first_morning", "2026-03-02T08:00:00.000Z")
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert document["exit"] == "onboarded"
    assert document["bindings"]["day_before"] == {"until": "2026-03-01T08:00:00.000Z"}
    assert woke_at(document) == ["2026-03-02T08:00:00.000Z"]


# --- indexed: bounded polling -------------------------------------------------------------------

async def test_reindex_ticket_polls_every_30s_until_indexed(harness: Harness) -> None:
    run_id = harness.start(example_flow("reindex-ticket"), {"ticket": {"id": "T-1042"}})
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert (document["status"], document["exit"]) == ("succeeded", "indexed")
    assert document["bindings"] == {
        "indexed": [{"check": {"id": "T-1042", "status": "queued"}},
                    {"check": {"id": "T-1042", "status": "indexing"}},
                    {"check": {"id": "T-1042", "status": "indexed"}}],
        "searchable": {"message": "Ticket T-1042 is searchable after 3 polls."},
    }
    assert woke_at(document) == [stamp(timedelta(seconds=30)), stamp(timedelta(seconds=60))]


async def test_reindex_ticket_gives_up_after_twenty_polls(tmp_path: Path) -> None:
    def never_indexed(args: dict[str, Any], _ctx: object) -> dict[str, Any]:
        return {"id": args["id"], "status": "queued"}

    harness = Harness(tmp_path, start=START, actions={"search.status": never_indexed})
    try:
        run_id = harness.start(example_flow("reindex-ticket"), {"ticket": {"id": "T-7"}})
        await harness.run_until_idle()
        document = harness.document(run_id)
    finally:
        harness.close()
    assert (document["status"], document["exit"]) == ("succeeded", "not-indexed")
    assert document["bindings"] == {"gave_up": {
        "message": "Ticket T-7 is not searchable: repeat-exhausted: 'until' was still false "
                   "after 20 iterations"}}
    assert woke_at(document) == [stamp(timedelta(seconds=30 * poll)) for poll in range(1, 20)]


# --- the fake search service --------------------------------------------------------------------

@pytest.mark.parametrize(("poll", "state"), [(0, "queued"), (1, "indexing"), (2, "indexed"),
                                             (19, "indexed")])
def test_the_fake_search_service_indexes_on_the_third_poll(search_module: Any, poll: int,
                                                           state: str) -> None:
    assert search_module.status({"id": "T-1", "poll": poll}, None) == {"id": "T-1",
                                                                       "status": state}


@pytest.mark.parametrize(("args", "message"), [
    ({"poll": 0}, "search.status needs the 'id' of a document"),
    ({"id": "", "poll": 0}, "search.status needs the 'id' of a document"),
    ({"id": "T-1"}, "search.status needs 'poll' as a count from 0, got None"),
    ({"id": "T-1", "poll": -1}, "search.status needs 'poll' as a count from 0, got -1"),
    ({"id": "T-1", "poll": "2"}, "search.status needs 'poll' as a count from 0, got '2'"),
    ({"id": "T-1", "poll": True}, "search.status needs 'poll' as a count from 0, got True"),
])
def test_the_fake_search_service_refuses_a_bad_request(search_module: Any,
                                                       args: dict[str, Any],
                                                       message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        search_module.status(args, None)
    assert str(caught.value) == message

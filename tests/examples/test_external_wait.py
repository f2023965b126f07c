"""The external-wait examples (examples/external-wait) load, and run as their comments say.

Each of the five shapes runs on the real engine and store (SQLite and PostgreSQL) through
:class:`tarry.testing.Harness` on a virtual clock, with the example's own actions and event
manifests, in both outcomes: answered in time, and never answered. The tests pin the exit,
the bindings and the virtual instants at which reminders, polls and escalations happened.
"""

from __future__ import annotations

import importlib
import re
import shutil
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner

from markdown_blocks import ROOT, Document
from tarry.actions import ActionFunction
from tarry.cli import app
from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.language.loader import load_flow
from tarry.language.manifests import load_manifests
from tarry.language.model import Flow
from tarry.model import EventState, RunStatus
from tarry.store import open_store
from tarry.testing import Harness

EXAMPLE = ROOT / "examples" / "external-wait"
FLOW_NAMES = ["claim-documents", "customs-clearance", "freight-quote", "po-confirmation",
              "po-confirmation-business-hours", "reply-review", "supplier-attestations"]
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ORDER = {"number": "PO-1042", "supplier": "acme", "buyer": "dana", "amount": 1200}


def example_flow(name: str) -> Flow:
    """The example flow ``flows/<name>.yaml``, loaded (and checked against the example's
    event manifests) with the example's declared actions."""
    settings = load_settings(EXAMPLE)
    return load_flow(EXAMPLE / "flows" / f"{name}.yaml", actions=settings.actions,
                     manifests=load_manifests(settings.event_files),
                     calendars=settings.calendars)


def stamp(delta: timedelta) -> str:
    """The run document's spelling of the instant ``delta`` after START."""
    return (START + delta).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def instants(document: dict[str, Any], kind: str) -> list[str]:
    """The instants of the run's history entries of ``kind``, in order."""
    return [entry["at"] for entry in document["history"] if entry["kind"] == kind]


def waiting_keys(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The match values each ``wait_for`` registered, by step path (``tarry show`` history)."""
    return {entry["step"]: {alt["type"]: alt["match"] for alt in entry["data"]["alternatives"]}
            for entry in document["history"]
            if entry["kind"] == "wait.registered" and entry["data"]["kind"] == "event"}


def received(harness: Harness, run_id: str) -> list[dict[str, Any]]:
    """The run's ``event.received`` history entries."""
    return [entry for entry in harness.document(run_id)["history"]
            if entry["kind"] == "event.received"]


@pytest.fixture
def outreach(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The example's ``outreach`` module (its fake channels), imported from the example."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    monkeypatch.delitem(sys.modules, "outreach", raising=False)
    return importlib.import_module("outreach")


@pytest.fixture
def actions(outreach: ModuleType) -> dict[str, ActionFunction]:
    """The user actions the example's tarry.toml declares, by name."""
    declared = load_settings(EXAMPLE).actions
    return {name: getattr(outreach, target.partition(":")[2])
            for name, target in declared.items()}


def make_harness(directory: Path, store_url: str,
                 actions: dict[str, ActionFunction]) -> Harness:
    """A harness with the example's actions and event manifests."""
    manifests = (EXAMPLE / "events.yaml").read_text(encoding="utf-8")
    return Harness(directory, start=START, store_url=store_url, actions=actions,
                   manifests=manifests, calendars=load_settings(EXAMPLE).calendars)


@pytest.fixture
def harness(tmp_path: Path, store_url: str,
            actions: dict[str, ActionFunction]) -> Iterator[Harness]:
    """A harness for the example on the test's store, closed afterwards."""
    h = make_harness(tmp_path, store_url, actions)
    yield h
    h.close()


# --- loading ------------------------------------------------------------------------------------

def test_the_example_holds_its_six_shapes_and_a_business_hours_variant() -> None:
    assert sorted(path.stem for path in (EXAMPLE / "flows").glob("*.yaml")) == FLOW_NAMES


@pytest.mark.parametrize("name", FLOW_NAMES)
def test_every_example_flow_loads_under_its_file_name(name: str) -> None:
    assert example_flow(name).name == name


def test_every_action_of_the_example_is_declared_in_its_tarry_toml(outreach: ModuleType) -> None:
    declared = load_settings(EXAMPLE).actions
    assert sorted(target.partition(":")[2] for target in declared.values()) == sorted(
        outreach.__all__)


@pytest.fixture
def fresh_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    """Undo changes to the import path, and import the example's module anew."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "outreach", raising=False)


@pytest.mark.usefixtures("fresh_imports")
def test_tarry_validate_accepts_the_example(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "external-wait"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".tarry", "__pycache__"))
    monkeypatch.chdir(project)
    result = CliRunner().invoke(app, ["validate"])
    assert result.exit_code == 0, result.stdout + result.stderr


@pytest.mark.usefixtures("fresh_imports")
def test_the_engine_loads_the_example_actions_and_manifests() -> None:
    engine = Engine.from_settings(load_settings(EXAMPLE), store=open_store("sqlite:///:memory:"))
    try:
        assert {"request.send", "customs.status", "report.summary"} <= set(engine.actions)
        assert sorted(engine.manifests) == ["attestation.signed", "carrier.quote",
                                            "counterpart.reply", "email.reply", "portal.upload",
                                            "repairer.invoice", "supplier.reply"]
    finally:
        engine.close()


def test_the_readme_quotes_only_what_the_example_files_hold() -> None:
    readme = Document("examples/external-wait/README.md", __file__)
    sources = [path.read_text(encoding="utf-8") for path in
               [EXAMPLE / "events.yaml", *sorted((EXAMPLE / "flows").glob("*.yaml"))]]
    quoted = readme.blocks("yaml")
    assert len(quoted) >= len(FLOW_NAMES)
    for block in quoted:
        assert any(block in source for source in sources), block


# --- single channel: po-confirmation ------------------------------------------------------------

async def start_order(harness: Harness) -> tuple[str, str]:
    """Start po-confirmation for ORDER and run it to its wait; the run id and request key."""
    run_id = harness.start(example_flow("po-confirmation"), {"order": ORDER})
    await harness.run_due()
    key = waiting_keys(harness.document(run_id))["reply"]["supplier.reply"]["request"]
    return run_id, key


async def test_po_confirmation_received_in_time(harness: Harness) -> None:
    run_id, key = await start_order(harness)
    assert harness.record(run_id).waiting_for == {
        "kind": "event", "step": "reply", "until": stamp(timedelta(days=5)),
        "event_type": "supplier.reply", "match": {"request": key}, "since": stamp(timedelta(0)),
        "others": 0, "alternatives": [{"event_type": "supplier.reply",
                                       "match": {"request": key}}],
        "next_reminder": stamp(timedelta(days=1))}
    await harness.advance(timedelta(days=1, hours=12))
    reply = {"request": key, "order": "PO-1042", "confirmed": True,
             "delivery_date": "2026-03-20"}
    sent = harness.send("supplier.reply", reply)
    assert (sent.state, sent.runs) == (EventState.DELIVERED, (run_id,))
    await harness.run_due()
    document = harness.document(run_id)
    assert (document["status"], document["exit"]) == ("succeeded", "received")
    assert document["bindings"] == {
        "request": {"key": key, "to": "acme", "channel": "email",
                    "subject": "Please confirm purchase order PO-1042 (1200 EUR)"},
        "reply": {"status": "received", "event": reply,
                  "received_at": stamp(timedelta(days=1, hours=12))},
    }
    assert instants(document, "reminder.sent") == [stamp(timedelta(days=1))]
    assert instants(document, "succeeded") == [stamp(timedelta(days=1, hours=12))]


async def test_po_confirmation_believes_only_a_valid_reply(harness: Harness) -> None:
    run_id, key = await start_order(harness)
    wrong_order = {"request": key, "order": "PO-9999", "confirmed": True,
                   "delivery_date": "2026-03-20"}
    no_date = {"request": key, "order": "PO-1042", "confirmed": True}
    malformed = {"request": key, "order": "PO-1042", "confirmed": "yes"}
    assert harness.send("supplier.reply", wrong_order).state is EventState.DELIVERED
    # The run stays findable by its wait while it waits: the next reply reaches it too, and
    # is looked at as soon as the first is rejected.
    assert harness.send("supplier.reply", no_date, id="no-date").state is EventState.DELIVERED
    invalid = harness.send("supplier.reply", malformed)
    assert (invalid.state, invalid.errors) == (EventState.INVALID,
                                               ("confirmed: 'yes' is not of type 'boolean'",))
    await harness.run_due()
    assert harness.record(run_id).status is RunStatus.WAITING
    assert harness.history_kinds(run_id).count("event.rejected") == 2
    assert harness.engine.store.get_event("no-date").state is EventState.DELIVERED
    declined = {"request": key, "order": "PO-1042", "confirmed": False}
    harness.send("supplier.reply", declined)
    await harness.run_due()
    document = harness.document(run_id)
    assert document["exit"] == "received"
    assert document["bindings"]["reply"]["event"] == declined


async def test_po_confirmation_never_answered_escalates_after_three_reminders(
        harness: Harness) -> None:
    run_id, key = await start_order(harness)
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert (document["status"], document["exit"]) == ("succeeded", "escalated")
    assert instants(document, "reminder.sent") == [stamp(timedelta(days=d)) for d in (1, 2, 3)]
    assert instants(document, "wait.timeout") == [stamp(timedelta(days=5))]
    assert instants(document, "resumed") == [stamp(timedelta(days=d)) for d in (1, 2, 3, 5)]
    bindings = document["bindings"]
    assert bindings["reply"] == {"status": "timeout", "event": None}
    assert bindings["escalate"] == {
        "ticket": bindings["escalate"]["ticket"], "owner": "dana",
        "about": "purchase order PO-1042",
        "reason": "no valid confirmation from acme within 5 days"}
    assert re.fullmatch(r"ESC-[0-9a-f]{8}", bindings["escalate"]["ticket"])
    late = harness.send("supplier.reply", {"request": key, "order": "PO-1042",
                                           "confirmed": False})
    assert late.state is EventState.BUFFERED  # the run is over: nothing waits for it


# --- single channel in business hours: po-confirmation-business-hours ---------------------------

async def test_po_confirmation_in_business_hours_skips_the_weekend_and_a_holiday(
        harness: Harness) -> None:
    berlin = ZoneInfo("Europe/Berlin")
    harness.clock.set(datetime(2026, 9, 25, 15, 0, tzinfo=berlin))  # a Friday; the 28th is off
    run_id = harness.start(example_flow("po-confirmation-business-hours"), {"order": ORDER})
    await harness.run_due()
    waiting = harness.document(run_id)["waiting_for"]
    assert waiting["until_local"] == "2026-09-29 15:00 Europe/Berlin"
    assert waiting["next_reminder"] == "2026-09-29T08:00:00.000Z"  # Tuesday 10:00
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert document["exit"] == "escalated"
    assert instants(document, "reminder.sent") == ["2026-09-29T08:00:00.000Z",
                                                   "2026-09-29T11:00:00.000Z"]
    assert document["bindings"]["lapsed"]["at"] == "2026-09-29T13:00:00.000Z"
    assert document["bindings"]["request"]["subject"].endswith("by 2026-09-29T13:00:00Z")


# --- multi-channel: claim-documents -------------------------------------------------------------

CLAIM = {"id": "CLM-77", "holder": "ada@example.com", "handler": "sam"}


async def start_claim(harness: Harness) -> tuple[str, str]:
    """Start claim-documents and run it to its wait; the run id and request key."""
    run_id = harness.start(example_flow("claim-documents"), {"claim": CLAIM})
    await harness.run_due()
    channels = waiting_keys(harness.document(run_id))["documents"]
    key = channels["portal.upload"]["case"]
    assert channels == {"email.reply": {"reference": key}, "portal.upload": {"case": key},
                        "repairer.invoice": {"claim": key}}
    return run_id, key


async def test_claim_documents_the_first_channel_to_answer_wins(harness: Harness) -> None:
    run_id, key = await start_claim(harness)
    await harness.advance(timedelta(days=4))
    upload = {"case": key, "attachment": "invoice.pdf"}
    harness.send("portal.upload", upload)
    await harness.run_due()
    document = harness.document(run_id)
    assert (document["status"], document["exit"]) == ("succeeded", "received")
    assert document["bindings"]["documents"] == {
        "status": "received", "type": "portal.upload", "event": upload,
        "received_at": stamp(timedelta(days=4))}
    assert instants(document, "reminder.sent") == [stamp(timedelta(days=3))]
    late = harness.send("email.reply", {"reference": key, "sender": CLAIM["holder"],
                                        "attachment": "invoice-copy.pdf"})
    assert (late.state, late.runs) == (EventState.BUFFERED, ())  # the other channels are gone


async def test_claim_documents_a_reply_without_the_invoice_is_not_enough(
        harness: Harness) -> None:
    run_id, key = await start_claim(harness)
    harness.send("email.reply", {"reference": key, "sender": CLAIM["holder"]})
    await harness.run_due()
    assert harness.record(run_id).status is RunStatus.WAITING
    await harness.advance(timedelta(days=1))
    invoice = {"claim": key, "attachment": "inv-5531.pdf", "total": 1830.5}
    harness.send("repairer.invoice", invoice)
    await harness.run_due()
    document = harness.document(run_id)
    assert document["exit"] == "received"
    assert document["bindings"]["documents"]["type"] == "repairer.invoice"
    assert [(entry["kind"], entry["data"]["type"]) for entry in document["history"]
            if entry["kind"].startswith("event.")] == [("event.rejected", "email.reply"),
                                                       ("event.received", "repairer.invoice")]


async def test_claim_documents_never_answered_escalates_to_the_handler(
        harness: Harness) -> None:
    run_id, _ = await start_claim(harness)
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert (document["status"], document["exit"]) == ("succeeded", "escalated")
    assert instants(document, "reminder.sent") == [stamp(timedelta(days=d)) for d in (3, 6, 9)]
    assert instants(document, "wait.timeout") == [stamp(timedelta(days=10))]
    assert document["bindings"]["documents"] == {"status": "timeout", "event": None,
                                                 "type": None}
    assert document["bindings"]["escalate"]["owner"] == "sam"


# --- first valid response wins: freight-quote ---------------------------------------------------

CARRIERS = ["northline", "bluefreight", "kestrel"]
SHIPMENT = {"id": "SHP-9", "budget": 900, "planner": "kim"}


async def start_quotes(harness: Harness) -> tuple[str, list[str]]:
    """Start freight-quote for CARRIERS and run it to its waits; the run id and each carrier's
    request key, in the order of CARRIERS."""
    run_id = harness.start(example_flow("freight-quote"),
                           {"shipment": SHIPMENT, "carriers": CARRIERS})
    await harness.run_due()
    waits = waiting_keys(harness.document(run_id))
    keys = [waits[f"quotes[{index}].quote"]["carrier.quote"]["request"]
            for index in range(len(CARRIERS))]
    assert len(set(keys)) == len(CARRIERS)  # one correlation key per carrier
    return run_id, keys


async def test_freight_quote_the_first_acceptable_quote_closes_the_rest(
        harness: Harness) -> None:
    run_id, keys = await start_quotes(harness)
    await harness.advance(timedelta(hours=3))
    harness.send("carrier.quote", {"request": keys[0], "available": True, "price": 1400})
    await harness.run_due()
    assert harness.record(run_id).status is RunStatus.WAITING  # too dear: rejected, waits on
    await harness.advance(timedelta(hours=2))
    harness.send("carrier.quote", {"request": keys[2], "available": True, "price": 870})
    await harness.run_due()
    document = harness.document(run_id)
    assert (document["status"], document["exit"]) == ("succeeded", "received")
    assert instants(document, "succeeded") == [stamp(timedelta(hours=5))]
    assert [(entry["kind"], entry["step"]) for entry in document["history"]
            if entry["kind"].startswith("event.")] == [("event.rejected", "quotes[0].quote"),
                                                       ("event.received", "quotes[2].quote")]
    close_out = [entry for entry in document["history"] if entry["step"] ==
                 "quotes[2].won.close_out" and entry["kind"] == "step.completed"]
    assert len(close_out) == 1
    # The other carriers' waits ended with the run: their quotes reach nobody.
    for key in keys[:2]:
        late = harness.send("carrier.quote", {"request": key, "available": True, "price": 500})
        assert (late.state, late.runs) == (EventState.BUFFERED, ())
    await harness.run_until_idle()
    assert len(received(harness, run_id)) == 1


async def test_freight_quote_no_acceptable_quote_escalates_when_the_window_closes(
        harness: Harness) -> None:
    run_id, keys = await start_quotes(harness)
    harness.send("carrier.quote", {"request": keys[1], "available": False, "price": 600})
    await harness.run_until_idle()
    document = harness.document(run_id)
    closes = stamp(timedelta(days=2))
    assert (document["status"], document["exit"]) == ("succeeded", "escalated")
    assert instants(document, "wait.timeout") == [closes] * len(CARRIERS)
    bindings = document["bindings"]
    assert bindings["opened"] == {"closes": closes}
    assert [scope["quote"] for scope in bindings["quotes"]] == [
        {"status": "timeout", "event": None}] * len(CARRIERS)
    assert [scope["won"] for scope in bindings["quotes"]] == [{"skipped": True}] * 3
    assert bindings["escalate"]["reason"] == f"no acceptable quote from 3 carriers by {closes}"


# --- long-running probe: customs-clearance ------------------------------------------------------

async def test_customs_clearance_polls_every_four_hours_until_cleared(harness: Harness) -> None:
    run_id = harness.start(example_flow("customs-clearance"),
                           {"shipment": "SHP-9", "owner": "lee"})
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert (document["status"], document["exit"]) == ("succeeded", "received")
    assert document["bindings"] == {
        "submitted": {"declaration": "DEC-SHP-9"},
        "cleared": [{"poll": {"declaration": "DEC-SHP-9", "status": status}}
                    for status in ("lodged", "under_review", "cleared")],
    }
    assert instants(document, "resumed") == [stamp(timedelta(hours=4)),
                                             stamp(timedelta(hours=8))]


async def test_customs_clearance_escalates_after_three_days_of_polling(
        tmp_path: Path, store_url: str, actions: dict[str, ActionFunction]) -> None:
    def never_cleared(args: dict[str, Any], _ctx: object) -> dict[str, Any]:
        return {"declaration": args["declaration"], "status": "under_review"}

    harness = make_harness(tmp_path, store_url, {**actions, "customs.status": never_cleared})
    try:
        run_id = harness.start(example_flow("customs-clearance"),
                               {"shipment": "SHP-9", "owner": "lee"})
        await harness.run_until_idle()
        document = harness.document(run_id)
    finally:
        harness.close()
    assert (document["status"], document["exit"]) == ("succeeded", "escalated")
    polls = [entry["at"] for entry in document["history"]
             if entry["kind"] == "step.completed" and entry["step"].endswith("].poll")]
    assert polls == [stamp(timedelta(hours=4 * index)) for index in range(19)]
    assert instants(document, "succeeded") == [stamp(timedelta(days=3))]
    bindings = document["bindings"]
    assert bindings["cleared"] == {"failed": True, "error": {
        "type": "repeat-exhausted", "message": "'until' was still false after 19 iterations"}}
    assert bindings["escalate"]["reason"] == "not cleared after 3 days of polling"


# --- per-item batch: supplier-attestations ------------------------------------------------------

def suppliers(count: int) -> list[dict[str, Any]]:
    """``count`` suppliers; every fourth must answer within 7 days instead of 14."""
    return [{"name": f"supplier-{index:04}", "contact": f"legal@s{index}.example",
             "owner": f"owner-{index % 7}", **({"respond_within": "7d"} if index % 4 == 0
                                                else {})}
            for index in range(count)]


async def start_batch(harness: Harness, entries: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """Start supplier-attestations and run it to its waits; the run id and each supplier's
    request key."""
    run_id = harness.start(example_flow("supplier-attestations"), {"suppliers": entries})
    await harness.run_due()
    requests = harness.document(run_id)["bindings"]["campaign"]["requests"]
    assert [request["name"] for request in requests] == [entry["name"] for entry in entries]
    return run_id, [request["key"] for request in requests]


def sign(harness: Harness, key: str, supplier: str) -> None:
    """Send a supplier's signed attestation."""
    sent = harness.send("attestation.signed", {"request": key, "supplier": supplier,
                                               "signed_by": "J. Doe"})
    assert sent.state is EventState.DELIVERED


async def test_supplier_attestations_all_signed_exit_received(harness: Harness) -> None:
    entries = suppliers(3)
    run_id, keys = await start_batch(harness, entries)
    for day, (key, entry) in enumerate(zip(keys, entries, strict=True), start=1):
        await harness.advance(timedelta(days=1))
        sign(harness, key, entry["name"])
        await harness.run_due()
        assert harness.record(run_id).status is (RunStatus.SUCCEEDED if day == 3
                                                 else RunStatus.WAITING)
    document = harness.document(run_id)
    assert document["exit"] == "received"
    assert document["bindings"]["summary"] == {"received": 3, "late": 0, "late_suppliers": []}
    assert [scope["signed"]["received_at"] for scope in document["bindings"]["attestations"]
            ] == [stamp(timedelta(days=day)) for day in (1, 2, 3)]


async def test_supplier_attestations_each_late_supplier_times_out_on_its_own_deadline(
        harness: Harness) -> None:
    entries = suppliers(3)  # supplier-0000 has 7 days, the others 14
    run_id, keys = await start_batch(harness, entries)
    harness.send("attestation.signed", {"request": keys[1], "supplier": "someone-else",
                                        "signed_by": "X"})
    await harness.advance(timedelta(days=2))
    sign(harness, keys[1], entries[1]["name"])
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert (document["status"], document["exit"]) == ("succeeded", "escalated")
    assert instants(document, "wait.timeout") == [stamp(timedelta(days=7)),
                                                  stamp(timedelta(days=14))]
    assert [scope["outcome"]["status"] for scope in document["bindings"]["attestations"]] == [
        "timeout", "received", "timeout"]
    assert document["bindings"]["escalate"]["late"] == [
        {"supplier": "supplier-0000", "owner": "owner-0"},
        {"supplier": "supplier-0002", "owner": "owner-2"}]
    assert harness.history_kinds(run_id).count("event.rejected") == 1


async def test_supplier_attestations_a_thousand_suppliers_each_on_its_own_deadline(
        harness: Harness) -> None:
    entries = suppliers(1000)
    run_id, keys = await start_batch(harness, entries)
    # A third of the suppliers sign, on day 1, 3, 6 or 10; those with 7 days who sign on day
    # 10 are too late (their reply finds no wait and is buffered, then recorded unmatched).
    days = (1, 3, 6, 10)
    signing = {index: timedelta(days=days[index // 3 % 4]) for index in range(0, 1000, 3)}
    deadline = {index: timedelta(days=7 if index % 4 == 0 else 14) for index in range(1000)}
    for day in days:
        await harness.run_until(START + timedelta(days=day))
        for index in (i for i, delta in signing.items() if delta.days == day):
            sent = harness.send("attestation.signed", {
                "request": keys[index], "supplier": entries[index]["name"], "signed_by": "J"})
            in_time = signing[index] < deadline[index]
            assert sent.state is (EventState.DELIVERED if in_time else EventState.BUFFERED)
    await harness.run_until_idle()

    document = harness.document(run_id)
    scopes = document["bindings"]["attestations"]
    for index, scope in enumerate(scopes):
        if index in signing and signing[index] < deadline[index]:
            assert scope["signed"]["received_at"] == stamp(signing[index]), index
            assert scope["outcome"]["status"] == "received", index
        else:
            assert scope["signed"] == {"status": "timeout", "event": None}, index
    timeouts = [entry for entry in document["history"] if entry["kind"] == "wait.timeout"]
    assert sorted({entry["at"] for entry in timeouts}) == [stamp(timedelta(days=7)),
                                                           stamp(timedelta(days=14))]
    answered = sum(scope["outcome"]["status"] == "received" for scope in scopes)
    assert len(received(harness, run_id)) == answered
    assert document["bindings"]["summary"]["received"] == answered
    assert (document["status"], document["exit"]) == ("succeeded", "escalated")


# --- the fake channels --------------------------------------------------------------------------

class FakeContext:
    """The one field of an action context the fakes read."""

    idempotency_key = "0123456789abcdef0123456789abcdef"


def test_close_out_tells_everyone_but_the_winner(outreach: ModuleType) -> None:
    assert outreach.close_out({"parties": CARRIERS, "winner": "kestrel"}, FakeContext()) == {
        "withdrawn": ["northline", "bluefreight"]}


def test_a_campaign_gives_every_entry_its_own_key(outreach: ModuleType) -> None:
    sent = outreach.send_all({"to": [{"name": "a"}, {"name": "b", "owner": "x"}]}, FakeContext())
    assert sent == {"requests": [{"name": "a", "key": "req-0123456789ab-0"},
                                 {"name": "b", "owner": "x", "key": "req-0123456789ab-1"}]}


@pytest.mark.parametrize(("action", "args", "message"), [
    ("send", {"channel": "email"}, "request.send needs 'to'"),
    ("send_all", {"to": "acme"}, "request.send_all needs 'to' as a list of objects with a "
                                 "'name'"),
    ("send_all", {"to": [{"contact": "x"}]}, "request.send_all needs 'to' as a list of objects "
                                             "with a 'name'"),
    ("remind", {"to": "acme"}, "request.remind needs 'key'"),
    ("remind", {"key": "req-1", "to": ""}, "request.remind needs 'to'"),
    ("escalate", {"about": "x"}, "request.escalate needs 'to'"),
    ("close_out", {"parties": ["a"]}, "request.close_out needs 'winner'"),
    ("close_out", {"parties": "a", "winner": "a"}, "request.close_out needs 'parties' as a "
                                                   "list, got 'a'"),
    ("submit_declaration", {}, "customs.submit needs 'shipment'"),
    ("declaration_status", {"poll": 0}, "customs.status needs 'declaration'"),
    ("declaration_status", {"declaration": "D", "poll": -1},
     "customs.status needs 'poll' as a count from 0, got -1"),
    ("declaration_status", {"declaration": "D", "poll": True},
     "customs.status needs 'poll' as a count from 0, got True"),
    ("summary", {"attestations": None}, "report.summary needs 'attestations' as a list, "
                                        "got None"),
])
def test_the_fakes_refuse_a_bad_request(outreach: ModuleType, action: str,
                                        args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        getattr(outreach, action)(args, FakeContext())
    assert str(caught.value) == message

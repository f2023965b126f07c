"""The commands about events: ``send``, and the ``events`` inbox with ``redeliver`` and
``discard``.

Each prints where the event went, one line (an invalid event's errors follow, one a line),
or with ``--json`` the event document. Exit codes: 0 when the event was delivered, buffered,
unmatched, a duplicate or discarded; 1 when it is invalid (quarantined) or the type or id is
unknown; 2 for a malformed ``--data``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from tarry._text import clip
from tarry.cli.layout import PlainCommand, PlainGroup
from tarry.cli.options import choice, parse_json_object
from tarry.cli.session import note, open_engine, open_run_store, print_json, print_listing
from tarry.clock import SystemClock
from tarry.config import load_settings
from tarry.engine.documents import event_document
from tarry.errors import StoreMissing, ValueTooLarge
from tarry.model import EventRecord, EventState

__all__ = ["describe_event", "events_app", "events_table", "read_data", "send"]

DataOption = Annotated[str | None, typer.Option(
    "--data", metavar="JSON|@FILE",
    help="The payload: a JSON object, or @path of a file holding one.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the event document (JSON).")]
EventArgument = Annotated[str, typer.Argument(metavar="ID", help="An event id.")]

_Document = Mapping[str, Any]


def read_data(text: str | None, limit: int,
              setting: str = "event_bytes") -> dict[str, Any] | None:
    """The ``--data`` payload: inline JSON, or ``@path`` of a file holding it (None: none).

    JSON text over ``limit`` bytes (the ``[limits]`` key ``setting``) is refused before it
    is read or parsed: its value could not be stored anyway."""
    if text is None:
        return None
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            _within(path.stat().st_size, limit, setting, f"the --data file {path}")
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise typer.BadParameter(f"cannot read {path}: {reason}",
                                     param_hint="'--data'") from None
    _within(len(text.encode("utf-8", "surrogatepass")), limit, setting, "the --data text")
    return parse_json_object(text, "--data")


def _within(size: int, limit: int, setting: str, what: str) -> None:
    if size > limit:
        raise ValueTooLarge(what, size=size, limit=limit, setting=setting)


def send(event_type: Annotated[str, typer.Argument(
             metavar="TYPE", help="A declared event type, such as slack.approval.")],
         data: DataOption = None,
         event_id: Annotated[str | None, typer.Option(
             "--id", metavar="ID",
             help="The event's id; an id already seen for this type is a duplicate, "
                  "acknowledged and not delivered again (default: a fresh id).")] = None,
         as_json: JsonOption = False) -> None:
    """Send an event; print where it went (delivered to runs, buffered, unmatched, invalid)."""
    settings = load_settings()
    payload = read_data(data, settings.limits.event_bytes)
    with open_engine(settings) as engine:
        record = engine.send(event_type, {} if payload is None else payload, id=event_id)
    _answer(record, as_json)


events_app = typer.Typer(
    name="events", cls=PlainGroup, no_args_is_help=False, add_completion=False,
    pretty_exceptions_enable=False, rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="The event inbox: list events; redeliver or discard one.")


@events_app.callback(invoke_without_command=True)
def list_events(
        ctx: typer.Context,
        state: Annotated[EventState | None, typer.Option(
            "--state", metavar="S", parser=choice(EventState, "an event state"),
            help="Only events in this state: " + ", ".join(EventState) + ".")] = None,
        limit: Annotated[int, typer.Option(
            "--limit", metavar="N", min=1, help="At most N events, newest first.")] = 50,
        as_json: Annotated[bool, typer.Option(
            "--json", help="Print a list of event documents (JSON).")] = False) -> None:
    """List events, newest first (the inbox: unmatched, invalid and buffered ones)."""
    if ctx.invoked_subcommand is not None:
        return
    nothing = f"no {state.value} events" if state else "no events"
    try:
        with open_run_store() as store:
            records = store.list_events(state=state, now=SystemClock().now(), limit=limit)
    except StoreMissing as exc:
        records = []
        nothing = f"{nothing}: {exc}"
    print_listing([event_document(record) for record in records], events_table,
                  as_json=as_json, nothing=nothing)


@events_app.command("redeliver", cls=PlainCommand)
def redeliver(event_id: EventArgument, data: Annotated[str | None, typer.Option(
                  "--data", metavar="JSON|@FILE",
                  help="Corrected payload (default: the stored one).")] = None,
              as_json: JsonOption = False) -> None:
    """Deliver an invalid, unmatched or buffered event again, optionally corrected."""
    settings = load_settings()
    payload = read_data(data, settings.limits.event_bytes)
    with open_engine(settings) as engine:
        record = engine.redeliver(event_id, payload)
    _answer(record, as_json)


@events_app.command("discard", cls=PlainCommand)
def discard(event_id: EventArgument, as_json: JsonOption = False) -> None:
    """Discard an invalid, unmatched or buffered event."""
    with open_engine() as engine:
        record = engine.discard(event_id)
    _answer(record, as_json)


def _answer(record: EventRecord, as_json: bool) -> None:
    doc = event_document(record)
    if as_json:
        print_json(doc)
    else:
        for line in describe_event(doc):
            typer.echo(line)
    if record.state is EventState.DELIVERED:
        note(_RESUMES_WITH_A_WORKER)
    if record.state is EventState.INVALID:
        note(f"the event is kept in the quarantine; correct it with: "
             f"tarry events redeliver {record.id} --data JSON")
        raise typer.Exit(1)


_RESUMES_WITH_A_WORKER = ("a run resumes with the event when a worker executes it "
                          "(tarry worker, or tarry serve); this command runs none")


_OUTCOMES: dict[str, str] = {
    "delivered": "delivered to {runs}",
    "buffered": "buffered until {buffer_until}; a matching wait_for that starts by then "
                "takes it",
    "unmatched": "unmatched: no run waits for it (kept in the inbox, tarry events)",
    "invalid": "invalid, not delivered:",
    "duplicate": "duplicate: an event with this id was received at {received_at}; "
                 "nothing delivered again",
    "discarded": "discarded",
}
"""state → what became of the event; filled in from the event document."""


def describe_event(doc: _Document) -> list[str]:
    """Where an event went: ``event <id> (<type>): <outcome>``, then each error of an
    invalid event on a line of its own."""
    outcome = _OUTCOMES[doc["state"]].format(runs=_runs(doc["runs"]),
                                             buffer_until=doc["buffer_until"],
                                             received_at=doc["received_at"])
    lines = [f"event {doc['id']} ({doc['type']}): {outcome}"]
    if doc.get("started") and doc["state"] != "duplicate":
        lines.append(f"  started {_runs(doc['started'])} (its flows' triggers)")
    if doc["state"] == "invalid":
        lines += [f"  - {error}" for error in doc["errors"]]
    return lines


def _runs(runs: Sequence[str]) -> str:
    return f"run {runs[0]}" if len(runs) == 1 else f"{len(runs)} runs: {', '.join(runs)}"


SUMMARY_WIDTH = 80
"""How many characters of an event's payload, and of its detail, a row of ``tarry events``
shows: one line per event however large its payload (``--json`` prints whole payloads)."""


def events_table(docs: Sequence[_Document]) -> Table:
    """One row per event: id, type, state, when received, detail, and the start of its
    payload as one line of JSON (each cut to :data:`SUMMARY_WIDTH` characters)."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    table.add_column("id", no_wrap=True)
    table.add_column("type", min_width=6)
    table.add_column("state", no_wrap=True)
    table.add_column("received", no_wrap=True)
    table.add_column("detail", min_width=10, overflow="fold")
    table.add_column("data", overflow="ellipsis")
    for doc in docs:
        table.add_row(doc["id"], doc["type"], doc["state"], doc["received_at"],
                      clip(_detail(doc), SUMMARY_WIDTH),
                      _summary(doc["data"]))
    return table


def _summary(data: Any) -> Text:
    """The payload as one line of JSON, cut to :data:`SUMMARY_WIDTH` characters and never
    wrapped: a narrow terminal cuts it shorter."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return Text(clip(text, SUMMARY_WIDTH), no_wrap=True, overflow="ellipsis")


def _detail(doc: _Document) -> str:
    """The runs it reached, how long it is buffered, or why it is invalid; and the runs its
    flows' triggers started."""
    reached = (f"runs {', '.join(doc['runs'])}" if doc["runs"] else
               f"until {doc['buffer_until']}" if doc["buffer_until"] else
               "; ".join(doc["errors"]))
    started = f"started {', '.join(doc['started'])}" if doc.get("started") else ""
    return "; ".join(part for part in (reached, started) if part)

"""Human output: one-line summaries, the "what it waits for" explanation, tables, timelines.

Everything here works on run documents (the JSON shape every interface prints), so what a
person reads and what ``--json`` prints cannot drift apart. The functions that return text are
pure; the ones that take a :class:`~rich.console.Console` only print.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from tarry.engine.explain import explain_wait
from tarry.language.durations import format_duration

__all__ = [
    "describe_outcome",
    "explain_wait",
    "format_data",
    "history_table",
    "journal_table",
    "progress_line",
    "runs_table",
    "short_wait",
    "show_run",
    "steps_table",
    "summary_line",
]

_Document = Mapping[str, Any]


def summary_line(doc: _Document) -> str:
    """``run <id> (<flow>): <status and outcome>``."""
    return f"run {doc['id']} ({doc['flow']}): {describe_outcome(doc)}"


def describe_outcome(doc: _Document) -> str:
    """The status with what ended the run: its exit, its error or its refusal token."""
    status = doc["status"]
    if status == "succeeded":
        return f"succeeded with exit '{doc['exit']}'"
    if status == "failed":
        return f"failed: {_describe_error(doc.get('error'))}"
    if status == "refused":
        return f"refused: {doc['reason']}"
    return str(status)


def _describe_error(error: Mapping[str, Any] | None) -> str:
    if not error:
        return "no error recorded"
    where = f"step '{error['step']}': " if error.get("step") else ""
    return f"{where}{error.get('type', 'error')}: {error.get('message', '')}"


# --- what a waiting run waits for ---------------------------------------------------------------

# The one-line explanation is the engine's (``tarry.engine.explain``), so the CLI, the API and
# the dashboard say the same thing.

def short_wait(waiting: Mapping[str, Any] | None) -> str:
    """A table cell: ``timer until …``, ``event slack.approval until …`` or ``slot acme/web
    (2 ahead)``; empty if none."""
    if not waiting:
        return ""
    what = waiting["kind"]
    types = [alt.get("event_type") for alt in waiting.get("alternatives") or ()] or [
        waiting.get("event_type")]
    if any(types):
        what = f"{what} {' | '.join(str(t) for t in types if t)}"
    if what == "slot":
        ahead = waiting.get("ahead")
        what = f"slot {waiting.get('key')}" + ("" if ahead is None else f" ({ahead} ahead)")
    return f"{what} until {waiting['until']}" if waiting.get("until") else what


# --- history --------------------------------------------------------------------------------------

def format_data(data: Mapping[str, Any]) -> str:
    """``key=value`` pairs with JSON values: ``kind="timer" until="2026-…Z"``."""
    return " ".join(f"{key}={json.dumps(value, ensure_ascii=False, default=str)}"
                    for key, value in data.items())


def progress_line(entry: Mapping[str, Any]) -> str:
    """One history entry as a line: instant, kind, step, data."""
    parts = [str(entry["at"]), f"{entry['kind']:<16}", entry.get("step") or "",
             format_data(entry.get("data") or {})]
    return "  ".join(part for part in parts if part).rstrip()


def history_table(history: Sequence[Mapping[str, Any]]) -> Table:
    """The run's history as a timeline: at, kind, step, data."""
    table = Table(title="history", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    table.add_column("at", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("step")
    table.add_column("data", overflow="fold")
    for entry in history:
        table.add_row(str(entry["at"]), entry["kind"], entry.get("step") or "",
                      format_data(entry.get("data") or {}))
    return table


def steps_table(steps: Sequence[Mapping[str, Any]]) -> Table:
    """How long each step took and waited: step, status, started, took, waited."""
    table = Table(title="steps", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    for column in ("step", "status", "started", "took", "waited"):
        table.add_column(column, no_wrap=column != "step")
    for span in steps:
        table.add_row(span["step"], span["status"], str(span["started_at"]),
                      _millis(span.get("duration_ms")), _millis(span.get("waited_ms")))
    return table


def journal_table(journal: Sequence[Mapping[str, Any]]) -> Table:
    """A Python run's recorded operations: name, kind, status, attempt, started, ended,
    result or error."""
    table = Table(title="journal", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    for column in ("operation", "kind", "status", "attempt", "started", "ended"):
        table.add_column(column, no_wrap=True)
    table.add_column("result / error", overflow="fold")
    for op in journal:
        shown = op.get("error") if op.get("error") is not None else op.get("result")
        table.add_row(op["name"], op["kind"], op["status"], str(op.get("attempt") or ""),
                      str(op.get("started_at") or ""), str(op.get("ended_at") or ""),
                      "" if shown is None else json.dumps(shown, ensure_ascii=False))
    return table


def _millis(value: int | None) -> str:
    return "" if value is None else format_duration(timedelta(milliseconds=value))


# --- lists and whole runs ---------------------------------------------------------------------

def runs_table(docs: Sequence[_Document]) -> Table:
    """One row per run: id, flow, status, exit or reason, what it waits for, last update."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    table.add_column("id", no_wrap=True)
    table.add_column("flow", min_width=6)
    table.add_column("status", no_wrap=True)
    table.add_column("exit/reason", min_width=6)
    table.add_column("waiting for", min_width=10)
    table.add_column("updated", no_wrap=True)
    for doc in docs:
        table.add_row(doc["id"], doc["flow"], doc["status"], _ending(doc),
                      short_wait(doc.get("waiting_for")), doc["updated_at"])
    return table


def _ending(doc: _Document) -> str:
    error = doc.get("error")
    return str(doc.get("exit") or doc.get("reason") or (error or {}).get("type") or "")


def show_run(console: Console, doc: _Document) -> None:
    """Everything ``tarry show`` prints for one run."""
    console.print(summary_line(doc))
    if doc.get("target"):
        console.print(f"target: {doc['target']}")
    explanation = explain_wait(doc)
    if explanation:
        console.print(explanation)
    console.print(f"created {doc['created_at']}, updated {doc['updated_at']}")
    for line in _links(doc):
        console.print(line)
    _print_json_section(console, "inputs", doc.get("inputs"))
    _print_json_section(console, "bindings", doc.get("bindings"))
    if doc.get("result") is not None:
        _print_json_section(console, "result", doc["result"])
    if doc.get("steps"):
        console.print()
        console.print(steps_table(doc["steps"]))
    if doc.get("journal"):
        console.print()
        console.print(journal_table(doc["journal"]))
    console.print()
    console.print(history_table(doc.get("history") or []))


def _links(doc: _Document) -> list[str]:
    """The run's attempt (once retried) and its links to other runs, a line each."""
    attempt = int(doc.get("attempt", 1))
    retries = attempt - 1
    lines = [f"attempt {attempt} (retried {retries} time{'s' if retries > 1 else ''})"
             ] if retries else []
    if doc.get("rerun_of"):
        lines.append(f"rerun of {doc['rerun_of']}")
    if doc.get("reruns"):
        lines.append(f"rerun as {', '.join(doc['reruns'])}")
    if doc.get("parent"):
        lines.append(f"child of {doc['parent']}")
    if doc.get("children"):
        lines.append(f"children {', '.join(doc['children'])}")
    if doc.get("continued_from"):
        lines.append(f"continued from {doc['continued_from']}")
    if doc.get("continued_as"):
        lines.append(f"continued as {doc['continued_as']}")
    return lines


def _print_json_section(console: Console, title: str, value: Any) -> None:
    console.print()
    console.print(f"{title}:")
    console.print(json.dumps(value if value is not None else {}, indent=2, ensure_ascii=False,
                             default=str))

"""The request and response bodies of the /v1 API, as pydantic models (they make the
OpenAPI document). The run and event documents are those every interface prints."""

from __future__ import annotations

from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from tarry.engine.operating import REASON_BYTES
from tarry.model import BatchAction, EventState, RunStatus, TaskState

__all__ = ["BatchDocument", "BatchFilterBody", "CancelRun", "CompleteTask", "EventDocument",
           "EventList", "FlowGraph", "FlowInfo", "FlowList", "GraphNode", "GraphRegion",
           "GraphStart", "Health", "HistoryItem", "JournalOperation", "ManifestInfo",
           "MigrateRuns", "MoveDocument", "RedeliverEvent", "RerunRun", "RetryRun",
           "RunDocument", "RunError", "RunList", "RunMoveDocument", "SendEvent", "StartBatch",
           "StartRun", "StepTiming", "TaskDocument", "TaskList", "WaitingFor"]

JsonObject = dict[str, Any]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StartRun(_Request):
    """``POST /v1/runs``: which flow to start, with what."""

    flow: str = Field(min_length=1, max_length=512,
                      description="A flow name (a YAML flow of the project, or a registered "
                                  "Python flow).")
    inputs: JsonObject = Field(default_factory=dict, description="The run's inputs.")
    target: str | None = Field(default=None, min_length=1, max_length=512,
                               description="An id-only label such as acme/web#7.")
    hold_after: AwareDatetime | None = Field(
        default=None, description="Hold the run until this instant (with its zone), besides "
                                  "any hold its flow declares.")


def _reason() -> Any:
    """The ``reason`` field of an operator's request."""
    return Field(default=None, min_length=1, max_length=REASON_BYTES,
                 description="Why (recorded in the run's history).")


class CancelRun(_Request):
    """``POST /v1/runs/{id}/cancel`` (the body is optional): why."""

    reason: str | None = _reason()


class RetryRun(_Request):
    """``POST /v1/runs/{id}/retry`` (the body is optional): why, and corrected inputs."""

    reason: str | None = _reason()
    inputs: JsonObject = Field(default_factory=dict,
                               description="Inputs that replace those of the same names for "
                                           "what is still to run.")


class RerunRun(_Request):
    """``POST /v1/runs/{id}/rerun`` (the body is optional): inputs to change."""

    inputs: JsonObject = Field(default_factory=dict,
                               description="Inputs that replace those of the same names.")


class BatchFilterBody(_Request):
    """The runs a batch acts on, filtered as ``GET /v1/runs`` filters them (all optional)."""

    flow: str | None = Field(default=None, max_length=512)
    status: RunStatus | None = Field(default=None, description=(
        "Narrows the statuses the action applies to (cancel: held, pending, running, "
        "waiting; retry: failed)."))
    waiting_for: str | None = Field(default=None, max_length=512, description=(
        "timer, event, hold, poll, task, retry, child, slot, throttle, window, or an event "
        "type."))
    target: str | None = Field(default=None, max_length=512)
    older_than: str | None = Field(default=None, max_length=64, description=(
        "Only runs created longer ago than this duration, such as 2h or 7d."))


class StartBatch(_Request):
    """``POST /v1/runs/batch``: an action on every run a filter selects."""

    action: BatchAction
    filter: BatchFilterBody = Field(default_factory=BatchFilterBody)
    reason: str | None = _reason()


class BatchDocument(BaseModel):
    """A batch: its action and filter, and counts that advance as it works."""

    id: str
    action: BatchAction
    filter: JsonObject
    reason: str | None
    by: str = Field(description="The principal that started it.")
    state: str = Field(description="running, then done.")
    total: int = Field(description="How many runs the filter selected when it began.")
    acted: int = Field(description="Runs cancelled or retried so far.")
    skipped: int = Field(description="Runs that no longer qualified when their turn came.")
    created_at: str
    updated_at: str


class MigrateRuns(_Request):
    """``POST /v1/runs/migrate``: move the held and waiting runs of a YAML flow to its
    current definition."""

    flow: str = Field(min_length=1, max_length=512,
                      description="The name of a YAML flow of the project (never a path).")
    dry_run: bool = Field(description="true: only say which runs would move and why others "
                                      "cannot; false: move those that can.")


class RunMoveDocument(BaseModel):
    """What became of one run."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    status: str = Field(description="held or waiting, as the run was read.")
    from_: str = Field(alias="from", description="The digest of the run's definition.")
    outcome: str = Field(description="moves (a dry run), moved, cannot move, or skipped (it "
                                     "changed while it was being moved).")
    reasons: list[str] = Field(description="Why it cannot move, or was skipped.")


class MoveDocument(BaseModel):
    """What moving a flow's runs did (or, as a dry run, would do)."""

    flow: str
    to: str = Field(description="The digest of the definition the runs move to.")
    dry_run: bool
    runs: list[RunMoveDocument]
    counts: dict[str, int] = Field(description="How many runs came to each outcome.")
    current: int = Field(description="Held or waiting runs already on that definition.")


class SendEvent(_Request):
    """``POST /v1/events/{type}`` (for types without a signature): the event."""

    data: JsonObject = Field(description="The payload, validated against the manifest.")
    id: str | None = Field(default=None, min_length=1, max_length=512,
                           description="Dedup id: an id seen before for this type is a "
                                       "duplicate (acknowledged, not delivered again).")


class RedeliverEvent(_Request):
    """``POST /v1/events/{id}/redeliver``: optionally, a corrected payload."""

    data: JsonObject | None = Field(default=None,
                                    description="The corrected payload (default: as stored).")


class CompleteTask(_Request):
    """``POST /v1/tasks/{id}/complete``: the person's decision and what the form asks for."""

    outcome: str = Field(min_length=1, max_length=512,
                         description="One of the task's outcomes.")
    data: JsonObject = Field(default_factory=dict,
                             description="What the task's form (a JSON Schema) asks for.")


class TaskDocument(BaseModel):
    """A task for a person: what is asked, of whom, until when, and the answer."""

    id: str
    run: str = Field(description="The id of the run that asked.")
    flow: str
    target: str | None
    step: str = Field(description="The path of the asking step.")
    title: str
    details: str | None
    assign: list[str] = Field(description="Who may complete it; empty: anyone.")
    form: JsonObject | None = Field(description="The JSON Schema of the data asked for.")
    outcomes: list[str]
    state: TaskState
    created_at: str
    until: str = Field(description="The deadline: the task times out then.")
    reminders: int = Field(description="How many reminders went out so far.")
    outcome: str | None
    data: JsonObject | None
    by: str | None = Field(description="The principal that completed it.")
    completed_at: str | None


class TaskList(BaseModel):
    """Tasks, newest first."""

    tasks: list[TaskDocument]


class WaitingFor(BaseModel):
    """What a waiting (or held) run waits for."""

    model_config = ConfigDict(extra="allow")

    kind: str = Field(description="timer, event, hold, poll, retry, reminder, task, slot, "
                                  "child (with the child's ``run``), "
                                  "throttle (with ``key``, ``limit`` and ``per``) or "
                                  "window (held until a business calendar opens).")
    step: str | None = None
    until: str | None = Field(default=None, description=(
        "The latest instant it waits until (null: a child wait without timeout)."))
    run: str | None = Field(default=None, description="The child run waited for (child).")
    event_type: str | None = None
    match: JsonObject | None = None
    since: str | None = None
    key: str | None = Field(default=None, description=(
        "For a slot: the flow's concurrency key the run waits for."))
    ahead: int | None = Field(default=None, description=(
        "For a slot: how many runs wait before this one in the key's queue."))
    holders: list[str] | None = Field(default=None, description=(
        "For a slot: the runs holding the key's slots (the earliest first)."))
    calendar: str | None = Field(default=None, description=(
        "The business calendar a window waits on, or that counted the wait's length."))
    until_local: str | None = Field(default=None, description=(
        "until on that calendar's clock, such as 2026-12-28 10:00 Europe/Berlin."))


class RunError(BaseModel):
    """Why a run failed."""

    model_config = ConfigDict(extra="allow")

    type: str
    message: str
    step: str | None = None


class HistoryItem(BaseModel):
    """One entry of a run's history."""

    at: str
    kind: str
    step: str | None
    data: JsonObject


class StepTiming(BaseModel):
    """How long one step took (and waited), read from the run's history."""

    step: str
    status: str = Field(description="running, waiting, completed or failed.")
    started_at: str
    ended_at: str | None
    duration_ms: int | None = Field(description="From start to end; null until it ends.")
    waited_ms: int | None = Field(description="From the wait's registration to the end; "
                                              "null for a step that did not wait.")


class JournalOperation(BaseModel):
    """One operation a Python run recorded."""

    name: str = Field(description="The operation's path (its name, or #n by its place).")
    kind: str = Field(description="step, now, random, wait, wait_for_event, "
                                  "wait_for_condition, ask, parallel, map or "
                                  "patch (a ctx.patched marker, named #patch:<id>).")
    status: str = Field(description="completed, failed, waiting or running.")
    attempt: int | None
    started_at: str | None
    ended_at: str | None
    result: Any = Field(default=None, description='Secrets masked; a value longer than '
                                                  '[limits] shown_bytes as {"$truncated": '
                                                  '{bytes, shown}}.')
    error: Any = None


class RunDocument(BaseModel):
    """The run document."""

    id: str
    flow: str
    status: RunStatus
    exit: str | None
    error: RunError | None
    reason: str | None
    target: str | None
    inputs: JsonObject
    bindings: JsonObject
    result: Any = None
    waiting_for: WaitingFor | None
    due_at: str | None
    created_at: str
    updated_at: str
    steps: list[StepTiming] | None = Field(
        default=None, description="Each time a step ran, in the order they started; with "
                                  "the history only.")
    journal: list[JournalOperation] | None = Field(
        default=None, description="A Python run's recorded operations, in the order they "
                                  "were recorded; with the history only.")
    rerun_of: str | None = Field(default=None, description="The run this one reruns.")
    reruns: list[str] | None = Field(default=None, description=(
        "The runs started as reruns of this one; only in single-run documents."))
    parent: str | None = Field(default=None, description=(
        "The run that started this one as its child (a call step), if any."))
    children: list[str] | None = Field(default=None, description=(
        "The child runs this one started (call steps); only in single-run documents."))
    continued_from: str | None = Field(default=None, description=(
        "The run that continued as this one (ctx.continue_as_new)."))
    continued_as: str | None = Field(default=None, description=(
        "The run this one continued as (it ended with exit 'continued'); only in single-run "
        "documents."))
    attempt: int | None = Field(default=None, description=(
        "1, and one more per retry; only with the history."))
    history: list[HistoryItem] | None = Field(
        default=None, description="Oldest first; only in GET /v1/runs/{id} and start/cancel.")


class RunList(BaseModel):
    """A page of runs, newest first."""

    runs: list[RunDocument]
    next_cursor: str | None = Field(description="Pass as ``cursor`` for the next page; null "
                                                "on the last page.")


class EventDocument(BaseModel):
    """The event document."""

    id: str
    type: str
    state: EventState
    runs: list[str] = Field(description="The runs it was delivered to.")
    started: list[str] = Field(description="The runs its flows' event triggers started.")
    errors: list[str]
    data: Any
    received_at: str
    buffer_until: str | None


class EventList(BaseModel):
    """A page of events, newest first."""

    events: list[EventDocument]
    next_cursor: str | None


class ManifestInfo(BaseModel):
    """A declared event type."""

    type: str
    correlate_on: list[str]
    correlate_paths: dict[str, str] = Field(
        description="Where each correlation key's value is in a payload, as a dotted path.")
    schema_: JsonObject | None = Field(alias="schema")
    buffer_seconds: float
    signature: str | None = Field(description="tarry, github or slack when senders sign; "
                                              "such a type needs no bearer token.")

    model_config = ConfigDict(populate_by_name=True)


class FlowInfo(BaseModel):
    """A loaded flow."""

    name: str
    description: str
    kind: str = Field(description="yaml or python")
    path: str = Field(description="The flow file (empty for a Python flow).")
    inputs: list[str]
    hold: bool = Field(description="Whether the flow holds its runs before the first step.")
    triggers: list[JsonObject] = Field(description="Its ``on:`` triggers, as ``tarry triggers "
                                                   "--json`` lists them: ``kind`` event (with "
                                                   "``event``, ``if``) or schedule (with "
                                                   "``schedule``, ``timezone``, ``catch_up``, "
                                                   "``next_at``), ``target`` and ``inputs``.")


class FlowList(BaseModel):
    """``GET /v1/flows``: the loaded flows, and the event types they may wait for."""

    flows: list[FlowInfo]
    events: list[ManifestInfo]
    problems: list[str] = Field(description="Flow files that were refused at load.")


class GraphRegion(BaseModel):
    """Steps drawn inside a box: the flow's steps, a group, a loop's body, a reminder, or the
    steps that recover a scope (``recover``)."""

    kind: str = Field(description="flow, group, repeat, for_each, remind or recover")
    title: str
    nodes: list[GraphNode]
    recover: GraphRegion | None


class GraphNode(BaseModel):
    """One step of the drawing, with the runs at it now."""

    id: str = Field(description="The step's place: step ids joined by dots, without loop "
                                "indices (the run list's at_step).")
    step: str
    kind: str = Field(description="action, wait, wait_for, ask, call, repeat, for_each, "
                                  "group, exit or fail")
    label: str
    notes: list[str]
    wait: str | None = Field(description="timer, event, task, poll or child: what its runs "
                                         "wait for")
    exit: str | None
    conditional: bool = Field(description="The step has an if: and may be skipped.")
    ends: bool = Field(description="The run never goes past this step.")
    counts: dict[str, int] = Field(description="Runs at this step now, by status (waiting, "
                                               "held, running, failed).")
    regions: list[GraphRegion]


class GraphStart(BaseModel):
    """What starts or gates the flow's runs, and the runs held there."""

    gates: list[str]
    counts: dict[str, int]


class FlowGraph(BaseModel):
    """``GET /v1/flows/{name}/graph``: a flow's drawing, as structure and as SVG."""

    flow: str
    description: str
    start: GraphStart
    steps: GraphRegion
    svg: str = Field(description="The drawing, with the counts linked to the dashboard's "
                                 "run list.")


GraphRegion.model_rebuild()


class Health(BaseModel):
    """``GET /healthz``."""

    status: str = Field(description="ok, or unavailable when the store cannot be reached.")
    store: str = Field(description="reachable or unreachable")
    worker: str = Field(description="running or stopped")
    checked_at: str

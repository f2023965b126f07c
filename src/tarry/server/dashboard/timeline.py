"""A run's history as a timeline: every wait is a span from its start to its deadline, and
what happened while it waited (reminders, checks, events) is marked at its instant.

:func:`timeline` reads a run document (history included) into lanes of spans and marks, one
lane per waiting step (``hold`` for the start gate); :func:`layout` places them on a drawing
the page renders as SVG. Both are pure: the document and ``now`` in, geometry out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tarry.clock import from_iso, iso
from tarry.server.dashboard.present import human_instant, short_span

__all__ = ["HANDLED_KINDS", "Drawing", "Lane", "Mark", "Span", "Timeline", "layout", "timeline"]

HOLD_LANE = "hold"
"""The lane of a run's start gate."""

THROTTLE_LANE = "throttle"
"""The lane of a throttled run's wait for its turn to start."""

MAX_LANES = 40
"""Lanes drawn at most; a run with more waits (a wide ``for_each``) says how many it left out."""


@dataclass(frozen=True)
class Mark:
    """Something that happened on a wait: ``reminder``, ``check``, ``event``, ``rejected``,
    ``ignored``, or ``next-check`` (planned, not happened yet)."""

    at: datetime
    kind: str
    label: str


@dataclass
class Span:
    """One wait: from ``start`` to its ``deadline``; ``end`` is when it ended (None: it still
    waits) and ``outcome`` how (``received``, ``timeout``, ``done``, ``cleared``, …)."""

    kind: str
    label: str
    start: datetime
    deadline: datetime | None
    end: datetime | None = None
    outcome: str = ""


@dataclass
class Lane:
    """The waits of one step (or of the hold), in order, and the marks on them."""

    name: str
    spans: list[Span] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)

    @property
    def open(self) -> Span | None:
        """The wait of this lane that has not ended, if any."""
        return self.spans[-1] if self.spans and self.spans[-1].end is None else None

    def close(self, at: datetime, outcome: str) -> None:
        """End the open wait, if any."""
        span = self.open
        if span is not None:
            span.end, span.outcome = at, outcome


@dataclass
class Timeline:
    """A run's waits by lane, between the run's creation and ``stop``."""

    start: datetime
    stop: datetime
    now: datetime | None
    """The present, when the run has not ended (drawn as a line)."""
    lanes: list[Lane]


_Entry = Mapping[str, Any]


class _Reader:
    """Walks the history once, opening and closing spans as the entries say."""

    def __init__(self, created: datetime) -> None:
        self.created = created
        self.lanes: dict[str, Lane] = {}

    def lane(self, name: str) -> Lane:
        return self.lanes.setdefault(name, Lane(name))

    def hold(self) -> Lane:
        lane = self.lane(HOLD_LANE)
        if not lane.spans:
            lane.spans.append(Span("hold", "held before its first step", self.created, None))
        return lane

    def close_all(self, at: datetime, outcome: str) -> None:
        for lane in self.lanes.values():
            lane.close(at, outcome)

    def read(self, entry: _Entry) -> None:
        at, step = from_iso(entry["at"]), entry.get("step")
        if step:
            self._iteration_started(step, at)
        handler = _HANDLERS.get(entry["kind"])
        if handler is not None:
            handler(self, at, step or "", entry.get("data") or {})

    def _iteration_started(self, step: str, at: datetime) -> None:
        """An entry inside ``poll[3]`` ends the pause of the poll before it."""
        for name, lane in self.lanes.items():
            span = lane.open
            if span is not None and span.kind == "poll" and step.startswith(name + "["):
                lane.close(at, "polled")


def _registered(reader: _Reader, at: datetime, step: str, data: Mapping[str, Any]) -> None:
    lane = reader.lane(step)
    lane.close(at, "replaced")
    kind = str(data.get("kind") or "wait")
    lane.spans.append(Span(kind, _wait_label(kind, data), at, _instant(data.get("until"))))


def _wait_label(kind: str, data: Mapping[str, Any]) -> str:
    alternatives = data.get("alternatives")
    types = [str(alt.get("type")) for alt in alternatives
             if isinstance(alt, Mapping)] if isinstance(alternatives, list) else []
    if data.get("type"):
        types.append(str(data["type"]))
    return f"event {' or '.join(types)}" if kind == "event" and types else kind


def _retrying(reader: _Reader, at: datetime, step: str, data: Mapping[str, Any]) -> None:
    lane = reader.lane(step)
    lane.close(at, "retried")
    lane.spans.append(Span("retry", f"retry, attempt {data.get('attempt', '?')}", at,
                           _instant(data.get("until"))))


def _condition_checked(reader: _Reader, at: datetime, step: str,
                       data: Mapping[str, Any]) -> None:
    lane = reader.lane(step)
    lane.close(at, "checked")
    lane.marks.append(Mark(at, "check", f"check, attempt {data.get('attempt', '?')}"))
    if data.get("until"):
        lane.spans.append(Span("poll", "next check", at, _instant(data["until"])))


def _marker(kind: str, describe: Callable[[Mapping[str, Any]], str],
            outcome: str | None = None) -> Callable[[_Reader, datetime, str,
                                                     Mapping[str, Any]], None]:
    """A handler that marks ``kind`` on the step's lane (and ends its wait with ``outcome``)."""
    def handle(reader: _Reader, at: datetime, step: str, data: Mapping[str, Any]) -> None:
        lane = reader.lane(step)
        lane.marks.append(Mark(at, kind, describe(data)))
        if outcome is not None:
            lane.close(at, outcome)
    return handle


def _ender(outcome: str) -> Callable[[_Reader, datetime, str, Mapping[str, Any]], None]:
    """A handler that ends the step's wait with ``outcome``."""
    def handle(reader: _Reader, at: datetime, step: str, data: Mapping[str, Any]) -> None:
        if step in reader.lanes:
            reader.lanes[step].close(at, outcome)
    return handle


def _run_ended(outcome: str) -> Callable[[_Reader, datetime, str, Mapping[str, Any]], None]:
    """A handler that ends every wait of the run."""
    def handle(reader: _Reader, at: datetime, step: str, data: Mapping[str, Any]) -> None:
        reader.close_all(at, outcome)
    return handle


def _hold_check(reader: _Reader, at: datetime, step: str, data: Mapping[str, Any]) -> None:
    outcome = str(data.get("outcome", "")).replace("_", " ")
    reader.hold().marks.append(Mark(at, "check", f"check {data.get('check', '?')}: {outcome}"))


def _hold_cleared(reader: _Reader, at: datetime, step: str, data: Mapping[str, Any]) -> None:
    reader.hold().close(at, "cleared")


def _throttled(reader: _Reader, at: datetime, step: str, data: Mapping[str, Any]) -> None:
    """A run that waited for its throttle's turn: a span from then to its turn."""
    turn = _instant(data.get("turn"))
    if turn is not None and turn > at:
        key = f" '{data['key']}'" if data.get("key") else ""
        reader.lane(THROTTLE_LANE).spans.append(Span("throttle", f"throttle{key}", at, turn))


def _started(reader: _Reader, at: datetime, step: str, data: Mapping[str, Any]) -> None:
    if THROTTLE_LANE in reader.lanes:
        reader.lanes[THROTTLE_LANE].close(at, "started")


def _event_text(data: Mapping[str, Any]) -> str:
    return f"{data.get('type', 'event')} {data.get('event_id', '')}".strip()


_HANDLERS: dict[str, Callable[[_Reader, datetime, str, Mapping[str, Any]], None]] = {
    "wait.registered": _registered,
    "step.retrying": _retrying,
    "condition.checked": _condition_checked,
    "reminder.sent": _marker("reminder", lambda d: f"reminder {d.get('count', '')}".strip()),
    "event.received": _marker("event", lambda d: f"received {_event_text(d)}", "received"),
    "event.rejected": _marker("rejected", lambda d: f"rejected {_event_text(d)} (accept)"),
    "event.ignored": _marker("ignored", lambda d: f"ignored {_event_text(d)} (too late)"),
    "wait.timeout": _ender("timeout"),
    "step.completed": _ender("done"),
    "step.failed": _ender("failed"),
    "hold.check": _hold_check,
    "hold.cleared": _hold_cleared,
    "throttle": _throttled,
    "started": _started,
    "succeeded": _run_ended("run succeeded"),
    "failed": _run_ended("run failed"),
    "cancelled": _run_ended("cancelled"),
    "refused": _run_ended("refused"),
}
"""History kind → what it does to the timeline; other kinds leave it as it is."""

HANDLED_KINDS = tuple(_HANDLERS)
"""The history kinds the timeline draws something for."""


def _instant(text: Any) -> datetime | None:
    """The instant a history entry names, or None when it names none it can be read as."""
    if not isinstance(text, str):
        return None
    try:
        instant = from_iso(text)
    except ValueError:
        return None
    return instant if instant.tzinfo is not None else None


def timeline(doc: Mapping[str, Any], now: datetime) -> Timeline:
    """The waits of the run ``doc`` (a run document with its history)."""
    created = from_iso(doc["created_at"])
    reader = _Reader(created)
    history: Sequence[_Entry] = doc.get("history") or ()
    for entry in history:
        reader.read(entry)
    ended = doc["status"] in {"succeeded", "failed", "cancelled", "refused"}
    _current_hold(reader, doc.get("waiting_for"))
    lanes = list(reader.lanes.values())
    lanes = [lane for lane in lanes if lane.spans or lane.marks]
    instants = [created, *(from_iso(e["at"]) for e in history)]
    instants += [i for lane in lanes for span in lane.spans for i in (span.deadline, span.end)
                 if i is not None]
    instants += [mark.at for lane in lanes for mark in lane.marks]
    if not ended:
        instants.append(now)
    stop = max(*instants, created + timedelta(seconds=1))
    return Timeline(start=created, stop=stop, now=None if ended else now, lanes=lanes)


def _current_hold(reader: _Reader, waiting: Mapping[str, Any] | None) -> None:
    """A held run's gate: its deadline (when the hold expires, else the next look) and its
    next check, planned."""
    if not waiting or waiting.get("kind") != "hold":
        return
    lane = reader.hold()
    span = lane.open
    next_look = _instant(waiting.get("until"))
    if span is not None:
        span.deadline = _instant(waiting.get("expires")) or next_look
    if next_look is not None:
        lane.marks.append(Mark(next_look, "next-check", "next check"))


# --- drawing --------------------------------------------------------------------------------

WIDTH = 1000
LABEL_WIDTH = 190
PLOT_LEFT = 200
PLOT_RIGHT = 975
AXIS_HEIGHT = 30
LANE_HEIGHT = 38
BAR_HEIGHT = 14
MIN_WIDTH = 2.0
DEADLINE_LABEL_WIDTH = 150
"""A span at least this wide says its deadline beside it."""

_AT_DEADLINE = {"event": "times out", "timer": "wakes", "hold": "hold expires",
                "poll": "polls again", "retry": "retries", "task": "times out",
                "throttle": "starts"}
"""What happens at a wait's deadline, by kind: the words beside it."""

_TICK_STEPS = tuple(timedelta(seconds=s) for s in (
    0.01, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
    2 * 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400, 14 * 86400,
    28 * 86400, 91 * 86400))
_MAX_TICKS = 8


@dataclass(frozen=True)
class DrawnSpan:
    """A span placed on the drawing: the planned part to the deadline, the part waited."""

    x: float
    waited: float
    planned: float | None
    """Width up to the deadline (None: no deadline known)."""
    kind: str
    outcome: str
    title: str
    deadline_label: str | None
    """What the deadline says beside it, when the span is wide enough to carry it."""


@dataclass(frozen=True)
class DrawnMark:
    """A mark placed on the drawing."""

    x: float
    kind: str
    title: str


@dataclass(frozen=True)
class DrawnLane:
    """A lane placed on the drawing, ``y`` its top."""

    name: str
    y: float
    bar_y: float
    """The top of the lane's bars."""
    spans: tuple[DrawnSpan, ...]
    marks: tuple[DrawnMark, ...]


@dataclass(frozen=True)
class Drawing:
    """Everything the SVG needs, in its own units (``WIDTH`` wide)."""

    width: int
    height: int
    bar_height: int
    ticks: tuple[tuple[float, str], ...]
    now_x: float | None
    lanes: tuple[DrawnLane, ...]
    left_out: int
    caption: str


def layout(line: Timeline) -> Drawing:
    """Place ``line`` on a drawing ``WIDTH`` units wide, one row per lane."""
    scale = _Scale(line.start, line.stop)
    shown = line.lanes[:MAX_LANES]
    lanes = tuple(_drawn_lane(lane, AXIS_HEIGHT + index * LANE_HEIGHT, scale, line.now)
                  for index, lane in enumerate(shown))
    caption = (f"{human_instant(iso(line.start))} to {human_instant(iso(line.stop))} "
               f"({short_span(line.stop - line.start)})")
    return Drawing(width=WIDTH, height=AXIS_HEIGHT + max(len(lanes), 1) * LANE_HEIGHT + 8,
                   bar_height=BAR_HEIGHT, ticks=scale.ticks(),
                   now_x=scale.x(line.now) if line.now else None, lanes=lanes,
                   left_out=len(line.lanes) - len(shown), caption=caption)


class _Scale:
    """Instants to x positions between ``PLOT_LEFT`` and ``PLOT_RIGHT``."""

    def __init__(self, start: datetime, stop: datetime) -> None:
        self.start = start
        self.range = stop - start

    def x(self, instant: datetime) -> float:
        fraction = (instant - self.start) / self.range
        return round(PLOT_LEFT + fraction * (PLOT_RIGHT - PLOT_LEFT), 1)

    def ticks(self) -> tuple[tuple[float, str], ...]:
        step = next((s for s in _TICK_STEPS if self.range / s <= _MAX_TICKS), _TICK_STEPS[-1])
        epoch = datetime(1970, 1, 1, tzinfo=self.start.tzinfo)
        first = epoch + -((epoch - self.start) // step) * step
        ticks = []
        instant = first
        while instant <= self.start + self.range:
            ticks.append((self.x(instant), _tick_label(instant, step)))
            instant += step
        return tuple(ticks)


def _tick_label(instant: datetime, step: timedelta) -> str:
    midnight = instant.hour == instant.minute == instant.second == 0
    if step >= timedelta(days=1) or (step >= timedelta(hours=1) and midnight):
        return f"{instant:%b %d}"
    if step >= timedelta(minutes=1):
        return f"{instant:%H:%M}"
    if step >= timedelta(seconds=1):
        return f"{instant:%H:%M:%S}"
    return f"{instant:%S}.{instant.microsecond // 1000:03d}s"


def _drawn_lane(lane: Lane, y: float, scale: _Scale, now: datetime | None) -> DrawnLane:
    spans = tuple(_drawn_span(span, scale, now) for span in lane.spans)
    marks = tuple(DrawnMark(scale.x(mark.at), mark.kind,
                            f"{mark.label} at {human_instant(iso(mark.at))}")
                  for mark in lane.marks)
    return DrawnLane(lane.name, y, y + (LANE_HEIGHT - BAR_HEIGHT) / 2, spans, marks)


def _drawn_span(span: Span, scale: _Scale, now: datetime | None) -> DrawnSpan:
    x = scale.x(span.start)
    waited_until = span.end or now or span.start
    planned = (max(scale.x(span.deadline) - x, MIN_WIDTH) if span.deadline is not None
               else None)
    label = (f"{_AT_DEADLINE.get(span.kind, 'deadline')} {span.deadline:%b %d %H:%M:%S}"
             if span.deadline is not None and planned is not None
             and planned >= DEADLINE_LABEL_WIDTH else None)
    return DrawnSpan(x=x, waited=max(scale.x(waited_until) - x, MIN_WIDTH), planned=planned,
                     kind=span.kind, outcome=span.outcome or "waiting",
                     title=_span_title(span), deadline_label=label)


def _span_title(span: Span) -> str:
    parts = [f"{span.label}: from {human_instant(iso(span.start))}"]
    if span.deadline is not None:
        parts.append(f"deadline {human_instant(iso(span.deadline))}")
    if span.end is not None:
        parts.append(f"ended {human_instant(iso(span.end))} ({span.outcome})")
    else:
        parts.append("still waiting")
    return ", ".join(parts)

"""The figures of the peers benchmark from its raw measurements, for ``run.py``.

Every measurement is one adapter's reply to one request (one workload, one system, one
round). :func:`summarize` turns the rounds of one system and workload into figures, each the
median over the rounds of that figure per round (and, for the suspension workload, the label
of how a waiting item is held, :func:`held_as`); :func:`tables` prints them side by side,
for a terminal or as Markdown, after :func:`comparison`, the one table of the headline
figures that the project's README shows.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from common import markdown_table, median, percentile
from rich.console import Console
from rich.table import Table

Result = Mapping[str, Any]
Figures = dict[str, float | None]

THREADS_PER_ITEM = 0.5
"""Threads (or processes) added per waiting item from which they are said to hold it."""
MEMORY_PER_ITEM = 4096.0
"""Resident bytes added per waiting item from which a process's memory is said to hold it
(below the least a peer holding its items in memory was measured to add, about 8 kB) …"""
MEMORY_FLOOR_MIB = 1.0
"""… provided it grew by this much in all: a process's memory moves by a few hundred KiB
between two readings on its own (its allocator, its store client's caches), which over a
hundred items is more than 4 kB each."""
STORE_PER_ITEM = 64.0
"""Store bytes added per waiting item from which the store is said to hold it."""


def _spread(values: Sequence[float]) -> dict[str, float]:
    return {"p50": percentile(values, 50), "p99": percentile(values, 99), "max": max(values)}


def timers(result: Result, request: Result) -> Figures:
    """Lateness (wake − due) percentiles, the submit rate achieved, the worker's peak RSS."""
    late = _spread(result["lateness_ms"])
    return {"lateness_p50_ms": late["p50"], "lateness_p99_ms": late["p99"],
            "lateness_max_ms": late["max"],
            "submits_per_second": len(result["lateness_ms"]) / result["submit_s"],
            "worker_peak_rss_mib": result["worker_rss_kib"] / 1024,
            "worker_threads_max": result["worker_threads_max"]}


def paced(result: Result, request: Result) -> Figures:
    """:func:`timers`, and how many were submitted within the cap (a system slower than the
    pace submits fewer; a result of before the cap, kept by ``--resume``, submitted all)."""
    return {"submitted": result.get("submitted", len(result["lateness_ms"])),
            **timers(result, request)}


def flood(result: Result, request: Result) -> Figures:
    """How many were submitted within the cap, at what rate, the wall time (first submit →
    last wake), lateness (wake − own due) percentiles, the worker's peak RSS and threads."""
    late = _spread(result["lateness_ms"])
    return {"submitted": result["submitted"],
            "reached": 1.0 if result["submitted"] == request["items"] else 0.0,
            "submits_per_second": result["submitted"] / result["submit_s"],
            "wall_s": result["wall_s"], "lateness_p50_ms": late["p50"],
            "lateness_p99_ms": late["p99"], "lateness_max_ms": late["max"],
            "worker_peak_rss_mib": result["worker_rss_kib"] / 1024,
            "worker_threads_max": result["worker_threads_max"]}


def burst(result: Result, request: Result) -> Figures:
    """Wakes per second of items all due at one instant: N ÷ (last wake − due)."""
    wakes = result["wakes"]
    span = max(wakes[-1] - result["due"], 0.001)
    return {"wakes_per_second": request["items"] / span,
            "first_wake_late_ms": (wakes[0] - result["due"]) * 1000,
            "last_wake_late_ms": (wakes[-1] - result["due"]) * 1000,
            "setup_slack_s": result["slack_s"],
            "worker_peak_rss_mib": result["worker_rss_kib"] / 1024,
            "worker_threads_max": result["worker_threads_max"]}


def starts(result: Result, request: Result) -> Figures:
    """Submits per second, one at a time and (where the system has a batch API) batched; the
    process's first submit, timed apart (absent from results of before it was)."""
    batched = result.get("batched_s")
    first = result.get("first_s")
    return {"single_per_second": request["items"] / result["single_s"],
            "first_submit_ms": None if first is None else first * 1000,
            "batched_per_second": (request["batch"] * request["batches"] / batched
                                   if batched else None)}


def events(result: Result, request: Result) -> Figures:
    """Idle (the paced events): send-to-resume latency percentiles and the duration of a send
    call. Under load (the events sent back to back): delivered/s (sent ÷ the first send's
    start → the last resume), sends/s, send-to-resume percentiles meanwhile, how many were
    sent within the cap (None but these where none was). Batched (where the system has a
    batch send): the same figures, prefixed ``batched_`` (all None where it has none)."""
    latency = _spread(result["latency_ms"])
    figures: Figures = {
        "resume_p50_ms": latency["p50"], "resume_p99_ms": latency["p99"],
        "resume_max_ms": latency["max"], "send_p50_ms": percentile(result["send_ms"], 50),
        **_sent(result, "load_", request["waiting"] - request["events"])}
    batched = _sent(result, "batched_", request["waiting"] - request["events"])
    return figures | {f"batched_{name}": value for name, value in batched.items()}


def _sent(result: Result, prefix: str, wanted: int) -> Figures:
    """The figures of one phase of the events sent under load (the result's fields
    ``prefix``...): none but how many were sent if none was, none at all if the phase did
    not run (a system without a batch send)."""
    sent = result.get(f"{prefix}sent")
    figures: Figures = {"load_sent": sent,
                        "reached": None if sent is None else float(sent == wanted),
                        "delivered_per_second": None, "sends_per_second": None,
                        "load_resume_p50_ms": None, "load_resume_p99_ms": None}
    if sent:
        loaded = _spread(result[f"{prefix}latency_ms"])
        figures |= {"delivered_per_second": sent / max(result[f"{prefix}span_s"], 0.001),
                    "sends_per_second": sent / max(result[f"{prefix}send_s"], 0.001),
                    "load_resume_p50_ms": loaded["p50"], "load_resume_p99_ms": loaded["p99"]}
    return figures


def suspension(result: Result, request: Result) -> Figures:
    """The worker's memory, threads and processes with few and with many items waiting, the
    server's memory and threads where measured, and what each adds per waiting item."""
    small, large = result["points"]
    added = int(large["waiting"] - small["waiting"])

    def per_item(field: str, scale: float = 1.0) -> float:
        return float(large[field] - small[field]) * scale / added

    figures: Figures = {
        "rss_small_mib": small["rss_kib"] / 1024, "rss_large_mib": large["rss_kib"] / 1024,
        "rss_ratio": large["rss_kib"] / small["rss_kib"],
        "threads_small": small["threads"], "threads_large": large["threads"],
        "processes_small": small["processes"], "processes_large": large["processes"],
        "bytes_per_waiting_item": per_item("store_bytes"),
        "rss_bytes_per_item": per_item("rss_kib", 1024),
        "threads_per_item": per_item("threads"), "processes_per_item": per_item("processes"),
        "server_rss_small_mib": None, "server_rss_large_mib": None,
        "server_threads_small": None, "server_threads_large": None,
        "server_rss_bytes_per_item": None}
    if "server_rss_kib" in small:
        figures |= {"server_rss_small_mib": small["server_rss_kib"] / 1024,
                    "server_rss_large_mib": large["server_rss_kib"] / 1024,
                    "server_threads_small": small["server_threads"],
                    "server_threads_large": large["server_threads"],
                    "server_rss_bytes_per_item": per_item("server_rss_kib", 1024)}
    return figures


def held_as(figures: Mapping[str, float | None], names: Mapping[str, str]) -> str:
    """How a waiting item is held, from what grows with the items (``figures`` of
    :func:`suspension`): each place that grows, named as the adapter names what it keeps
    there (``names``: ``store``, ``worker_memory``, ``server_memory``), the costliest first:
    a process or a thread per item (threads or processes added ≥ 0.5 per item), then the
    worker's memory, the server's (≥ :data:`MEMORY_PER_ITEM` resident bytes per item and
    :data:`MEMORY_FLOOR_MIB` in all), the store (≥ :data:`STORE_PER_ITEM` bytes per item).
    Flat threads and memory with a growing store: ``row``."""
    def grows(field: str, floor: float) -> bool:
        value = figures.get(field)
        return value is not None and value >= floor

    def memory_grows(prefix: str) -> bool:
        small, large = figures.get(f"{prefix}_small_mib"), figures.get(f"{prefix}_large_mib")
        return (small is not None and large is not None
                and large - small >= MEMORY_FLOOR_MIB
                and grows(f"{prefix}_bytes_per_item", MEMORY_PER_ITEM))

    places = [("process", grows("processes_per_item", THREADS_PER_ITEM)),
              ("thread", grows("threads_per_item", THREADS_PER_ITEM)),
              (names["worker_memory"], memory_grows("rss")),
              (names["server_memory"], memory_grows("server_rss")),
              (names["store"], grows("bytes_per_waiting_item", STORE_PER_ITEM))]
    found = list(dict.fromkeys(name for name, grown in places if grown))
    return " + ".join(found) or "nothing measured grows"


def million(result: Result, request: Result) -> Figures:
    """A million (``items``) waiting runs against ``baseline``: storage per waiting run, an
    idle worker's memory and threads at each, and how long creating them took."""
    few, many = result["points"]
    added = many["waiting"] - few["waiting"]
    create_s, suspend_s = sum(result["create_s"]), sum(result["suspend_s"])
    return {"waiting": many["waiting"],
            "bytes_per_waiting_run": (many["store_bytes"] - few["store_bytes"]) / added,
            "store_mib": many["store_bytes"] / 2**20,
            "rss_baseline_mib": few["rss_kib"] / 1024, "rss_mib": many["rss_kib"] / 1024,
            "rss_ratio": many["rss_kib"] / few["rss_kib"],
            "peak_rss_baseline_mib": few["peak_rss_kib"] / 1024,
            "peak_rss_mib": many["peak_rss_kib"] / 1024,
            "threads_baseline": few["threads"], "threads": many["threads"],
            "create_per_second": many["waiting"] / create_s,
            "suspend_per_second": many["waiting"] / suspend_s,
            "setup_s": create_s + suspend_s}


FIGURES: dict[str, Callable[[Result, Result], Figures]] = {
    "timers": timers, "burst": burst, "flood": flood, "paced": paced, "starts": starts,
    "events": events, "suspension": suspension, "million": million}


def summarize(measurements: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The rounds of one system, workload (and size): each figure's median over the rounds
    that measured it, how many did, and the replies that were n/a or errors."""
    workload = measurements[0]["request"]["workload"]
    good = [m for m in measurements if m["reply"].get("ok")]
    na = sorted({m["reply"]["na"] for m in measurements if "na" in m["reply"]})
    errors = [m["reply"]["error"].strip().splitlines()[-1] for m in measurements
              if "error" in m["reply"]]
    per_round = [FIGURES[workload](m["reply"]["result"], m["request"]) for m in good]
    figures: dict[str, float | None] = {}
    for name in per_round[0] if per_round else ():
        values = [value for figure in per_round if (value := figure[name]) is not None]
        figures[name] = median(values) if values else None
    summary: dict[str, Any] = {"rounds": len(good), "figures": figures}
    if workload == "suspension" and good:
        result = good[0]["reply"]["result"]
        summary |= {"held_as": held_as(figures, result["held"]), "server": result["server"]}
    if workload in REACHED and good:
        summary["reached"] = reached(good, *REACHED[workload])
    if workload == "events" and good:
        summary["batched"] = good[0]["reply"]["result"].get("batched_na") or reached(
            good, REACHED["events"][0], "batched_sent", "sent in batches")
    if na:
        summary["na"] = na[0]
    if errors:
        summary["errors"] = errors
    return summary


REACHED: dict[str, tuple[Callable[[Result], int], str, str]] = {
    "flood": (lambda request: int(request["items"]), "submitted", "submitted"),
    "paced": (lambda request: int(request["items"]), "submitted", "submitted"),
    "events": (lambda request: int(request["waiting"] - request["events"]), "load_sent",
               "sent back to back"),
}
"""The workloads whose submits or sends stop at a cap: how many they should reach (from the
request), the result's field that says how many they did, and what it counts."""


def reached(measurements: Sequence[Mapping[str, Any]], wanted: Callable[[Result], int],
            field: str, what: str) -> str:
    """Whether every round reached ``wanted(request)`` (``field`` of its result) within the
    cap, or how many did not and how far they got."""
    request = measurements[0]["request"]
    target = wanted(request)
    # a result of before its workload had a cap (kept by --resume) lacks the field: it reached
    got = [m["reply"]["result"].get(field, target) for m in measurements]
    short = [each for each in got if each < target]
    if not short:
        return "yes"
    return (f"did not reach {target:,} within the cap of {request['cap_s']:g} s "
            f"in {len(short)} of {len(measurements)} rounds ({what} "
            f"{', '.join(f'{each:,}' for each in short)})")


_LATENESS_RATIO = (("tarry_ratio", "lateness_p99_ms", "lateness_p99_ms", "p99 ÷ this"),)
RATIOS: dict[str, tuple[tuple[str, str, str, str], ...]] = {
    "starts": (("tarry_ratio", "single_per_second", "single_per_second", "÷ this"),
               ("tarry_batched_ratio", "batched_per_second", "batched_per_second",
                "batched ÷ this")),
    "timers": _LATENESS_RATIO, "paced": _LATENESS_RATIO, "flood": _LATENESS_RATIO,
    "burst": (("tarry_ratio", "wakes_per_second", "wakes_per_second", "÷ this"),),
    "events": (("tarry_ratio", "delivered_per_second", "delivered_per_second", "÷ this"),
               ("tarry_batched_ratio", "batched_delivered_per_second", "delivered_per_second",
                "batched ÷ this")),
}
"""How tarry is compared in each workload: for each ratio, the summary's key for it, tarry's
figure, the figure of the system it is divided by, and the column's label after tarry's
system name. The targets' figures: submits a second, lateness p99 (below 1: tarry's is
lower), wakes a second, events delivered a second. Batched, tarry's batch send is compared
with every system's one-at-a-time sends (the peers have no batch send)."""

LIMIT_RATIOS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "starts": (("single_per_second", "", "÷ limit"),
               ("batched_per_second", "_batched", "batched ÷ limit")),
    "burst": (("wakes_per_second", "", "÷ limit"),),
    "events": (("delivered_per_second", "", "÷ limit"),
               ("batched_delivered_per_second", "_batched", "batched ÷ limit")),
}
"""The figures given as a ratio to the limit of the system's store (``limit_ratio``, for a
system on SQLite or PostgreSQL): the figure, which limit divides it (``""``: the one-at-a-time
transactions a second; ``"_batched"``: the writes a second committed in batches) and the
column's label."""


def add_limit_ratios(summaries: Mapping[str, Mapping[str, dict[str, Any]]],
                     stores: Mapping[str, str], limit: Mapping[str, float]) -> None:
    """Give each summary of a workload in :data:`LIMIT_RATIOS` of a system whose store has a
    limit (``stores``: each system's; ``limit``: the run's medians) its ``limit_ratio``: each
    figure ÷ that limit (None where the figure or the limit is missing)."""
    for key, by_system in summaries.items():
        compared = LIMIT_RATIOS.get(key.split(":")[0], ())
        for system, summary in by_system.items():
            if not compared or stores.get(system) not in ("sqlite", "postgresql"):
                continue
            summary["limit_ratio"] = {
                figure: _ratio(summary["figures"].get(figure),
                               limit.get(f"{stores[system]}{which}"))
                for figure, which, _ in compared}


def _ratio(value: float | None, divisor: float | None) -> float | None:
    return value / divisor if value and divisor else None


def add_tarry_ratios(summaries: Mapping[str, Mapping[str, dict[str, Any]]],
                     tarry: Sequence[str]) -> None:
    """Give each system's summary of a workload in :data:`RATIOS` its ratios (such as
    ``tarry_ratio``): for each of ``tarry`` (tarry's systems) measured in the workload, that
    system's figure ÷ this one's, both medians of the same run's rounds (None where either
    has none)."""
    for key, by_system in summaries.items():
        for ratio, figure, divisor, _ in RATIOS.get(key.split(":")[0], ()):
            ours = {name: by_system[name]["figures"].get(figure)
                    for name in tarry if name in by_system}
            for summary in by_system.values():
                theirs = summary["figures"].get(divisor)
                summary[ratio] = {name: _ratio(value, theirs) for name, value in ours.items()}


# -- the printed tables ----------------------------------------------------------------------

PIPED_WIDTH = 240
"""The tables' width when the output is not a terminal (a log): wide enough not to wrap."""
TEXT = "text"
"""A column's format when it shows a text of the summary (not a figure)."""
RATIO = "ratio"
"""A column's format when it shows a ratio: a tarry system's figure to the row's
(``tarry_ratio``), or the row's figure to its store's limit (``limit_ratio``)."""
LATENESS_COLUMNS = [("lateness p50 ms", "lateness_p50_ms", ".1f"),
                    ("p99 ms", "lateness_p99_ms", ".1f"), ("max ms", "lateness_max_ms", ".0f"),
                    ("submits/s", "submits_per_second", ",.0f"),
                    ("worker MiB", "worker_peak_rss_mib", ".1f"),
                    ("threads", "worker_threads_max", ".0f")]
"""The columns of the timers and of the paced workload (the same measurement)."""
COLUMNS: dict[str, list[tuple[str, str, str]]] = {
    "timers": LATENESS_COLUMNS,
    "paced": [*LATENESS_COLUMNS, ("reached N", "reached", TEXT)],
    "burst": [("wakes/s", "wakes_per_second", ",.0f"),
              ("first late ms", "first_wake_late_ms", ",.0f"),
              ("last late ms", "last_wake_late_ms", ",.0f"),
              ("slack s", "setup_slack_s", ".1f"), ("threads", "worker_threads_max", ".0f")],
    "flood": [("submitted", "submitted", ",.0f"), ("submits/s", "submits_per_second", ",.0f"),
              ("wall s", "wall_s", ",.1f"), ("lateness p50 ms", "lateness_p50_ms", ",.1f"),
              ("p99 ms", "lateness_p99_ms", ",.0f"), ("max ms", "lateness_max_ms", ",.0f"),
              ("worker MiB", "worker_peak_rss_mib", ".1f"),
              ("threads", "worker_threads_max", ".0f"), ("reached N", "reached", TEXT)],
    "starts": [("one at a time /s", "single_per_second", ",.0f"),
               ("batched /s", "batched_per_second", ",.0f"),
               ("first submit ms", "first_submit_ms", ",.1f")],
    "events": [("send→resume p50 ms", "resume_p50_ms", ".1f"),
               ("p99 ms", "resume_p99_ms", ".1f"), ("max ms", "resume_max_ms", ".0f"),
               ("send p50 ms", "send_p50_ms", ".2f"),
               ("delivered/s", "delivered_per_second", ",.0f"),
               ("sends/s", "sends_per_second", ",.0f"),
               ("loaded p50 ms", "load_resume_p50_ms", ",.1f"),
               ("loaded p99 ms", "load_resume_p99_ms", ",.0f"),
               ("sent", "load_sent", ",.0f"), ("reached", "reached", TEXT),
               ("batched delivered/s", "batched_delivered_per_second", ",.0f"),
               ("batched", "batched", TEXT)],
    "suspension": [("RSS few MiB", "rss_small_mib", ".1f"),
                   ("RSS many MiB", "rss_large_mib", ".1f"),
                   ("threads few", "threads_small", ".0f"),
                   ("threads many", "threads_large", ".0f"),
                   ("server MiB few", "server_rss_small_mib", ".1f"),
                   ("server MiB many", "server_rss_large_mib", ".1f"),
                   ("server threads few", "server_threads_small", ".0f"),
                   ("server threads many", "server_threads_large", ".0f"),
                   ("bytes/item", "bytes_per_waiting_item", ",.0f"),
                   ("held as", "held_as", TEXT)],
    "million": [("waiting", "waiting", ",.0f"), ("bytes/run", "bytes_per_waiting_run", ",.0f"),
                ("RSS base MiB", "rss_baseline_mib", ".1f"), ("RSS MiB", "rss_mib", ".1f"),
                ("ratio", "rss_ratio", ".3f"), ("threads base", "threads_baseline", ".0f"),
                ("threads", "threads", ".0f"), ("created/s", "create_per_second", ",.0f"),
                ("to wait/s", "suspend_per_second", ",.0f"), ("setup s", "setup_s", ",.0f")],
}


def cell(summary: Mapping[str, Any], key: str, spec: str) -> str:
    """One figure as text: its value, or why there is none."""
    if "na" in summary:
        return "n/a"
    if spec == TEXT:
        return str(summary.get(key, "error" if summary.get("errors") else "n/a"))
    if spec == RATIO:
        ratios, name = key.split("/", 1)
        ratio = summary.get(ratios, {}).get(name)
        return "n/a" if ratio is None else f"{ratio:.2f}"
    value = summary["figures"].get(key)
    if value is None:
        return "error" if summary.get("errors") else "n/a"
    return format(value, spec)


def tables(summaries: Mapping[str, Mapping[str, Mapping[str, Any]]],
           titles: Mapping[str, str], *, markdown: bool = False) -> None:
    """The comparison, then one table per workload (and size): a row per system, the medians
    of the rounds; for a terminal, or with ``markdown`` as Markdown."""
    found = [(COMPARISON_TITLE, comparison(summaries))]
    for key, by_system in summaries.items():
        workload = key.split(":")[0]
        columns = (COLUMNS[workload] + ratio_columns(workload, by_system)
                   + limit_columns(workload, by_system))
        found.append((titles[key], [
            ["system", *(label for label, _, _ in columns), "rounds"],
            *([system, *(cell(summary, figure, spec) for _, figure, spec in columns),
               str(summary["rounds"])] for system, summary in by_system.items())]))
    if markdown:
        print("\n".join(markdown_table(title, rows) for title, rows in found), end="")
        return
    console = Console(width=None if sys.stdout.isatty() else PIPED_WIDTH)
    for title, (header, *rows) in found:
        table = Table(title=title, title_justify="left")
        table.add_column(header[0])
        for label in header[1:]:
            table.add_column(label, justify="right")
        for row in rows:
            table.add_row(*row)
        console.print(table)


COMPARISON_TITLE = "the comparison: medians of the rounds"
"""The title of :func:`comparison`'s table."""


def comparison(summaries: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[list[str]]:
    """The headline figures, a row per system (a header first): how a waiting item is held,
    the timers' lateness p99, the largest burst's wakes/s, starts and events one at a time
    and batched, and the worker's peak memory under the timers."""
    bursts = sorted((key for key in summaries if key.startswith("burst:")),
                    key=lambda key: int(key.split(":")[1]))
    columns = [("held as", "suspension", "held_as", TEXT),
               ("timer lateness p99 ms", "timers", "lateness_p99_ms", ".1f"),
               (f"burst of {bursts[-1].split(':')[1] if bursts else 'N'}, wakes/s",
                bursts[-1] if bursts else "burst", "wakes_per_second", ",.0f"),
               ("starts/s one at a time", "starts", "single_per_second", ",.0f"),
               ("starts/s batched", "starts", "batched_per_second", ",.0f"),
               ("events delivered/s one at a time", "events", "delivered_per_second", ",.0f"),
               ("events delivered/s batched", "events", "batched_delivered_per_second",
                ",.0f"),
               ("worker MiB", "timers", "worker_peak_rss_mib", ".1f")]
    systems = list(dict.fromkeys(system for by_system in summaries.values()
                                 for system in by_system))
    return [["system", *(label for label, _, _, _ in columns)],
            *([system, *(cell(summaries[key][system], figure, spec)
                         if system in summaries.get(key, {}) else "n/a"
                         for _, key, figure, spec in columns)] for system in systems)]


def ratio_columns(workload: str, by_system: Mapping[str, Mapping[str, Any]],
                  ) -> list[tuple[str, str, str]]:
    """A column per tarry system and ratio compared in ``workload``: its figure ÷ the
    row's."""
    return [(f"{name} {label}", f"{ratio}/{name}", RATIO)
            for ratio, _, _, label in RATIOS.get(workload, ())
            for name in dict.fromkeys(name for summary in by_system.values()
                                      for name in summary.get(ratio, {}))]


def limit_columns(workload: str, by_system: Mapping[str, Mapping[str, Any]],
                  ) -> list[tuple[str, str, str]]:
    """A column per figure of ``workload`` given as a ratio to its store's limit, if any
    system has them."""
    if not any("limit_ratio" in summary for summary in by_system.values()):
        return []
    return [(label, f"limit_ratio/{figure}", RATIO)
            for figure, _, label in LIMIT_RATIOS.get(workload, ())]

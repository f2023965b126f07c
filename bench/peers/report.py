"""The figures of the peers benchmark from its raw measurements, for ``run.py``.

Every measurement is one adapter's reply to one request (one workload, one system, one
round). :func:`summarize` turns the rounds of one system and workload into figures, each the
median over the rounds of that figure per round; :func:`tables` prints them side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from common import median, percentile
from rich.console import Console
from rich.table import Table

Result = Mapping[str, Any]
Figures = dict[str, float | None]


def _spread(values: Sequence[float]) -> dict[str, float]:
    return {"p50": percentile(values, 50), "p99": percentile(values, 99), "max": max(values)}


def timers(result: Result, request: Result) -> Figures:
    """Lateness (wake − due) percentiles, the submit rate achieved, the worker's peak RSS."""
    late = _spread(result["lateness_ms"])
    return {"lateness_p50_ms": late["p50"], "lateness_p99_ms": late["p99"],
            "lateness_max_ms": late["max"],
            "submits_per_second": request["items"] / result["submit_s"],
            "worker_peak_rss_mib": result["worker_rss_kib"] / 1024}


def burst(result: Result, request: Result) -> Figures:
    """Wakes per second of items all due at one instant: N ÷ (last wake − due)."""
    wakes = result["wakes"]
    span = max(wakes[-1] - result["due"], 0.001)
    return {"wakes_per_second": request["items"] / span,
            "first_wake_late_ms": (wakes[0] - result["due"]) * 1000,
            "last_wake_late_ms": (wakes[-1] - result["due"]) * 1000,
            "setup_slack_s": result["slack_s"],
            "worker_peak_rss_mib": result["worker_rss_kib"] / 1024}


def starts(result: Result, request: Result) -> Figures:
    """Submits per second, one at a time and (where the system has a batch API) batched."""
    batched = result.get("batched_s")
    return {"single_per_second": request["items"] / result["single_s"],
            "batched_per_second": (request["batch"] * request["batches"] / batched
                                   if batched else None)}


def events(result: Result, request: Result) -> Figures:
    """Send-to-resume latency percentiles and the duration of a send call."""
    latency = _spread(result["latency_ms"])
    return {"resume_p50_ms": latency["p50"], "resume_p99_ms": latency["p99"],
            "resume_max_ms": latency["max"], "send_p50_ms": percentile(result["send_ms"], 50)}


def suspension(result: Result, request: Result) -> Figures:
    """The worker's memory with few and with many items waiting, and the storage per item."""
    small, large = result["points"]
    added = large["waiting"] - small["waiting"]
    return {"rss_small_mib": small["rss_kib"] / 1024, "rss_large_mib": large["rss_kib"] / 1024,
            "rss_ratio": large["rss_kib"] / small["rss_kib"],
            "bytes_per_waiting_item": (large["store_bytes"] - small["store_bytes"]) / added}


FIGURES: dict[str, Callable[[Result, Result], Figures]] = {
    "timers": timers, "burst": burst, "starts": starts, "events": events,
    "suspension": suspension}


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
    if na:
        summary["na"] = na[0]
    if errors:
        summary["errors"] = errors
    return summary


# -- the printed tables ----------------------------------------------------------------------

COLUMNS: dict[str, list[tuple[str, str, str]]] = {
    "timers": [("lateness p50 ms", "lateness_p50_ms", ".1f"),
               ("p99 ms", "lateness_p99_ms", ".1f"), ("max ms", "lateness_max_ms", ".0f"),
               ("submits/s", "submits_per_second", ",.0f"),
               ("worker MiB", "worker_peak_rss_mib", ".1f")],
    "burst": [("wakes/s", "wakes_per_second", ",.0f"),
              ("first late ms", "first_wake_late_ms", ",.0f"),
              ("last late ms", "last_wake_late_ms", ",.0f"),
              ("slack s", "setup_slack_s", ".1f")],
    "starts": [("one at a time /s", "single_per_second", ",.0f"),
               ("batched /s", "batched_per_second", ",.0f")],
    "events": [("send→resume p50 ms", "resume_p50_ms", ".1f"),
               ("p99 ms", "resume_p99_ms", ".1f"), ("max ms", "resume_max_ms", ".0f"),
               ("send p50 ms", "send_p50_ms", ".2f")],
    "suspension": [("RSS few MiB", "rss_small_mib", ".1f"),
                   ("RSS many MiB", "rss_large_mib", ".1f"), ("ratio", "rss_ratio", ".2f"),
                   ("bytes/item", "bytes_per_waiting_item", ",.0f")],
}


def cell(summary: Mapping[str, Any], key: str, spec: str) -> str:
    """One figure as text: its value, or why there is none."""
    if "na" in summary:
        return "n/a"
    value = summary["figures"].get(key)
    if value is None:
        return "error" if summary.get("errors") else "n/a"
    return format(value, spec)


def tables(summaries: Mapping[str, Mapping[str, Mapping[str, Any]]],
           titles: Mapping[str, str]) -> None:
    """One table per workload (and size): a row per system, the medians of the rounds."""
    console = Console()
    for key, by_system in summaries.items():
        workload = key.split(":")[0]
        table = Table(title=titles[key], title_justify="left")
        table.add_column("system")
        for label, _, _ in COLUMNS[workload]:
            table.add_column(label, justify="right")
        table.add_column("rounds", justify="right")
        for system, summary in by_system.items():
            table.add_row(system, *(cell(summary, figure, spec)
                                    for _, figure, spec in COLUMNS[workload]),
                          str(summary["rounds"]))
        console.print(table)

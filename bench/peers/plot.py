"""The peers benchmark's plots, from its JSON (run in an environment with matplotlib).

    python bench/peers/plot.py bench/results/peers-<date>.json

Writes, beside the JSON, ``<name>-lateness.png`` (the distribution of timer lateness and of
send-to-resume latency, idle and under load, every round pooled, per system),
``<name>-throughput.png`` (burst wakes per second against the number of items, submits per
second, and events delivered per second, per system: medians of the rounds) and, when the
JSON has the flood workload, ``<name>-flood.png`` (per N, the distribution of each item's
lateness, every round pooled, per system; and per system against N, the submits per second
and the items woken per second from about the first due to the last wake: medians of the
rounds) and, when it has the paced workload, ``<name>-paced.png`` (per N, the distribution
of each item's lateness when every system started the items at one rate). Prints the paths
written.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

FLOOR_MS = 0.1
"""Values below this are drawn at it (the axes are logarithmic)."""


Reply = tuple[str, Mapping[str, Any], Mapping[str, Any]]
"""A measurement's system, request and result."""


def replies(document: Mapping[str, Any], workload: str,
            items: int | None = None) -> Iterable[Reply]:
    """Each successful reply to ``workload`` (of ``items`` items, if given)."""
    for each in document["measurements"]:
        if each["request"]["workload"] == workload and each["reply"].get("ok") and \
                (items is None or each["request"]["items"] == items):
            yield each["system"], each["request"], each["reply"]["result"]


def pooled(document: Mapping[str, Any], workload: str, field: str,
           items: int | None = None) -> dict[str, list[float]]:
    """Every value of ``field`` in the replies to ``workload`` (of ``items`` items, if
    given), per system, rounds pooled; a reply without it (a results file written before
    the figure existed) adds nothing."""
    found: dict[str, list[float]] = {}
    for system, _, result in replies(document, workload, items):
        if field in result:
            found.setdefault(system, []).extend(result[field])
    return found


def ecdf(axes: Any, values: Mapping[str, Iterable[float]], title: str) -> None:
    """One empirical distribution function per system, on a logarithmic axis."""
    for system, series in values.items():
        ordered = sorted(max(value, FLOOR_MS) for value in series)
        axes.step(ordered, [(rank + 1) / len(ordered) for rank in range(len(ordered))],
                  where="post", label=f"{system} (n={len(ordered)})")
    axes.set_xscale("log")
    axes.set_xlabel("milliseconds (log)")
    axes.set_ylabel("fraction of items")
    axes.set_title(title)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="small")


def lateness(document: Mapping[str, Any], path: Path) -> bool:
    """Timer lateness and send-to-resume latency distributions, idle and under load (always
    drawn: True)."""
    figure, (timers, events, loaded) = plt.subplots(1, 3, figsize=(21, 5.5))
    sizes = document["sizes"]
    ecdf(timers, pooled(document, "timers", "lateness_ms"),
         f"timer lateness (wake − due): {sizes['timer_items']} items at "
         f"{sizes['timer_rate']:g}/s, due {sizes['delay_s']:g} s after submit")
    ecdf(events, pooled(document, "events", "latency_ms"),
         f"send-to-resume, idle: {sizes['events']:,} events at {sizes['event_rate']:g}/s, "
         f"{sizes['waiting']:,} waiting")
    cap = f"for at most {sizes['event_cap_s']:g} s" if "event_cap_s" in sizes else "no cap"
    ecdf(loaded, pooled(document, "events", "load_latency_ms"),
         f"send-to-resume under load: the other {sizes['waiting'] - sizes['events']:,} "
         f"sent back to back\n({cap})")
    return _saved(figure, document, path)


def throughput(document: Mapping[str, Any], path: Path) -> bool:
    """Burst wakes/s against N, submits/s one at a time and batched, and events delivered/s
    (always drawn: True)."""
    figure, (bursts, starts, delivered) = plt.subplots(1, 3, figsize=(21, 5.5))
    summary = document["summary"]
    per_system: dict[str, list[tuple[int, float]]] = {}
    for key, by_system in summary.items():
        if key.startswith("burst:"):
            for system, found in by_system.items():
                rate = found["figures"].get("wakes_per_second")
                if rate:
                    per_system.setdefault(system, []).append((int(key.split(":")[1]), rate))
    for system, points in per_system.items():
        points.sort()
        bursts.plot([n for n, _ in points], [rate for _, rate in points], marker="o",
                    label=system)
    bursts.set_xscale("log")
    bursts.set_yscale("log")
    bursts.set_xlabel("items due at one instant (N)")
    bursts.set_ylabel("wakes per second (median of rounds)")
    bursts.set_title("burst: N ÷ (last wake − due)")
    bursts.grid(True, which="both", alpha=0.3)
    bursts.legend(fontsize="small")
    _starts(starts, summary.get("starts", {}))
    _delivered(delivered, summary.get("events", {}))
    return _saved(figure, document, path)


def _starts(axes: Any, by_system: Mapping[str, Any]) -> None:
    _one_and_batched(axes, by_system, ("single_per_second", "batched_per_second"),
                     "submits per second (median of rounds)", "starts (no bar: no batch API)")


def _delivered(axes: Any, by_system: Mapping[str, Any]) -> None:
    _one_and_batched(axes, by_system, ("delivered_per_second", "batched_delivered_per_second"),
                     "events delivered per second (median of rounds)",
                     "events under load: sent ÷ (last resume − first send), one send call "
                     "at a time and batched (no bar: no batch API)")


def _one_and_batched(axes: Any, by_system: Mapping[str, Any], fields: tuple[str, str],
                     ylabel: str, title: str) -> None:
    """A pair of bars per system: its figure ``fields[0]`` (one at a time) and
    ``fields[1]`` (batched)."""
    systems = list(by_system)
    width = 0.4
    for offset, (field, label) in enumerate(zip(fields, ("one at a time", "batched"),
                                                strict=True)):
        values = [by_system[s]["figures"].get(field) or 0 for s in systems]
        axes.bar([i + offset * width for i in range(len(systems))], values, width, label=label)
    axes.set_xticks([i + width / 2 for i in range(len(systems))], systems, rotation=30,
                    ha="right")
    axes.set_yscale("log")
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.grid(True, axis="y", which="both", alpha=0.3)
    axes.legend(fontsize="small")


FLOOD_RATES: dict[str, tuple[str, Callable[[Mapping[str, Any], Mapping[str, Any]], float]]] = {
    "submits": ("submits per second (median of rounds)",
                lambda request, result: result["submitted"] / result["submit_s"]),
    "woken": ("woken per second: submitted ÷ (wall − delay), from about the first due\n"
              "to the last wake (median of rounds; the submit rate when it keeps up)",
              lambda request, result: result["submitted"] / max(
                  result["wall_s"] - request["delay_s"], 0.001)),
}
"""The flood's two rates per system and N, from one reply's request and result."""


def flood(document: Mapping[str, Any], path: Path) -> bool:
    """Per N, the flood's lateness distributions; per system against N, its submits per
    second and woken per second (a hollow marker: N was not reached within the cap
    in some round). False, and nothing drawn, without a flood in the JSON."""
    sizes = sorted({each["request"]["items"] for each in document["measurements"]
                    if each["request"]["workload"] == "flood"})
    if not sizes:
        return False
    columns = max(len(sizes), len(FLOOD_RATES))
    figure, grid = plt.subplots(2, columns, figsize=(7 * columns, 11), squeeze=False)
    settings = document["sizes"]
    for axes, items in zip(grid[0], sizes, strict=False):
        ecdf(axes, pooled(document, "flood", "lateness_ms", items),
             f"flood of {items:,}: lateness (wake − own due)\neach due "
             f"{settings['delay_s']:g} s after its own submit, submits capped at "
             f"{settings['flood_cap_s']:g} s")
    for axes, (label, rate) in zip(grid[1], FLOOD_RATES.values(), strict=False):
        _flood_rates(axes, document, sizes, rate)
        axes.set_ylabel(label)
    for axes in [*grid[0][len(sizes):], *grid[1][len(FLOOD_RATES):]]:
        axes.set_visible(False)
    return _saved(figure, document, path)


def _flood_rates(axes: Any, document: Mapping[str, Any], sizes: list[int],
                 rate: Callable[[Mapping[str, Any], Mapping[str, Any]], float]) -> None:
    systems = dict.fromkeys(system for system, _, _ in replies(document, "flood"))
    for system in systems:
        points = []
        for items in sizes:
            found = [(request, result) for each, request, result
                     in replies(document, "flood", items) if each == system]
            if found:
                points.append((items, statistics.median(rate(*each) for each in found),
                               all(result["submitted"] == items for _, result in found)))
        line = axes.plot([n for n, _, _ in points], [value for _, value, _ in points],
                         label=system)[0]
        for items, value, reached in points:
            axes.plot([items], [value], marker="o", color=line.get_color(),
                      markerfacecolor=line.get_color() if reached else "none")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("items submitted back to back (N; hollow: not reached within the cap)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="small")


def paced(document: Mapping[str, Any], path: Path) -> bool:
    """Per N, the paced workload's lateness distributions (every system started the items
    at one rate). False, and nothing drawn, without the paced workload in the JSON."""
    sizes = sorted({each["request"]["items"] for each in document["measurements"]
                    if each["request"]["workload"] == "paced"})
    if not sizes:
        return False
    figure, grid = plt.subplots(1, len(sizes), figsize=(max(10, 7 * len(sizes)), 5.5),
                                squeeze=False)
    settings = document["sizes"]
    for axes, items in zip(grid[0], sizes, strict=True):
        ecdf(axes, pooled(document, "paced", "lateness_ms", items),
             f"{items:,} started at {settings['paced_rate']:g}/s by every system: lateness "
             f"(wake − due)\neach due {settings['delay_s']:g} s after its start")
    return _saved(figure, document, path)


def _saved(figure: Any, document: Mapping[str, Any], path: Path) -> bool:
    """Caption ``figure`` with the run's facts and write it to ``path``: True (drawn)."""
    figure.suptitle(_caption(document))
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return True


def _caption(document: Mapping[str, Any]) -> str:
    load = document["machine"]["load_average"]
    return (f"{document['finished_at'][:10]}, {document['preset']}, "
            f"{document['rounds']} rounds, {document['machine']['nproc']} cores, "
            f"load average at start {load[0]:.1f} (a shared machine: noisy)")


def main(argv: list[str]) -> int:
    """Draw the plots beside the JSON named on the command line."""
    source = Path(argv[0])
    document = json.loads(source.read_text(encoding="utf-8"))
    draws: tuple[tuple[str, Callable[[Mapping[str, Any], Path], bool]], ...] = (
        ("lateness", lateness), ("throughput", throughput), ("flood", flood),
        ("paced", paced))
    for name, draw in draws:
        target = source.with_name(f"{source.stem}-{name}.png")
        if draw(document, target):
            print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

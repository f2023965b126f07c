"""The peers benchmark's plots, from its JSON (run in an environment with matplotlib).

    python bench/peers/plot.py bench/results/peers-<date>.json

Writes, beside the JSON, ``<name>-lateness.png`` (the distribution of timer lateness and of
send-to-resume latency, every round pooled, per system) and ``<name>-throughput.png`` (burst
wakes per second against the number of items, and submits per second, per system: medians
of the rounds). Prints the paths written.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

FLOOR_MS = 0.1
"""Values below this are drawn at it (the axes are logarithmic)."""


def pooled(document: Mapping[str, Any], workload: str, field: str) -> dict[str, list[float]]:
    """Every value of ``field`` in the replies to ``workload``, per system, rounds pooled."""
    found: dict[str, list[float]] = {}
    for each in document["measurements"]:
        if each["request"]["workload"] == workload and each["reply"].get("ok"):
            found.setdefault(each["system"], []).extend(each["reply"]["result"][field])
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


def lateness(document: Mapping[str, Any], path: Path) -> None:
    """Timer lateness and send-to-resume latency distributions."""
    figure, (timers, events) = plt.subplots(1, 2, figsize=(14, 5.5))
    sizes = document["sizes"]
    ecdf(timers, pooled(document, "timers", "lateness_ms"),
         f"timer lateness (wake − due): {sizes['timer_items']} items at "
         f"{sizes['timer_rate']:g}/s, due {sizes['delay_s']:g} s after submit")
    ecdf(events, pooled(document, "events", "latency_ms"),
         f"send-to-resume: {sizes['events']} events at {sizes['event_rate']:g}/s, "
         f"{sizes['waiting']} waiting")
    figure.suptitle(_caption(document))
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def throughput(document: Mapping[str, Any], path: Path) -> None:
    """Burst wakes/s against N, and submits/s one at a time and batched."""
    figure, (bursts, starts) = plt.subplots(1, 2, figsize=(14, 5.5))
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
    figure.suptitle(_caption(document))
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def _starts(axes: Any, by_system: Mapping[str, Any]) -> None:
    systems = list(by_system)
    width = 0.4
    for offset, (field, label) in enumerate((("single_per_second", "one at a time"),
                                             ("batched_per_second", "batched"))):
        values = [by_system[s]["figures"].get(field) or 0 for s in systems]
        axes.bar([i + offset * width for i in range(len(systems))], values, width, label=label)
    axes.set_xticks([i + width / 2 for i in range(len(systems))], systems, rotation=30,
                    ha="right")
    axes.set_yscale("log")
    axes.set_ylabel("submits per second (median of rounds)")
    axes.set_title("starts (no bar: no batch API)")
    axes.grid(True, axis="y", which="both", alpha=0.3)
    axes.legend(fontsize="small")


def _caption(document: Mapping[str, Any]) -> str:
    load = document["machine"]["load_average"]
    return (f"{document['finished_at'][:10]}, {document['preset']}, "
            f"{document['rounds']} rounds, {document['machine']['nproc']} cores, "
            f"load average at start {load[0]:.1f} (a shared machine: noisy)")


def main(argv: list[str]) -> int:
    """Draw both plots beside the JSON named on the command line."""
    source = Path(argv[0])
    document = json.loads(source.read_text(encoding="utf-8"))
    for name, draw in (("lateness", lateness), ("throughput", throughput)):
        target = source.with_name(f"{source.stem}-{name}.png")
        draw(document, target)
        print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

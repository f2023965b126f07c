"""The peers' report reads results kept by ``--resume`` from a run of before a change."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

_PEERS = Path(__file__).resolve().parents[2] / "bench" / "peers"


@pytest.fixture
def report(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The report module, importable with the benchmarks' ``common`` beside it."""
    monkeypatch.syspath_prepend(str(_PEERS.parent))
    monkeypatch.syspath_prepend(str(_PEERS))
    return importlib.import_module("report")


def test_a_paced_result_of_before_the_cap_counts_every_item_as_submitted(
        report: ModuleType) -> None:
    kept = {"request": {"workload": "paced", "items": 3, "rate": 300.0, "delay_s": 2.0,
                        "timeout_s": 90.0},
            "reply": {"ok": True, "result": {"submit_s": 0.01, "lateness_ms": [0.2, 0.3, 0.4],
                                             "worker_rss_kib": 1024, "worker_threads_max": 2}}}
    summary = report.summarize([kept])
    assert summary["figures"]["submitted"] == 3
    assert summary["figures"]["submits_per_second"] == pytest.approx(300.0)
    assert summary["reached"] == "yes"


def test_a_limit_the_run_did_not_measure_gives_no_ratio(report: ModuleType) -> None:
    summaries = {"starts": {"tarry-sqlite": {"figures": {"single_per_second": 2000.0,
                                                         "batched_per_second": 40000.0}}}}
    report.add_limit_ratios(summaries, {"tarry-sqlite": "sqlite"}, {"sqlite": 4000.0})
    assert summaries["starts"]["tarry-sqlite"]["limit_ratio"] == {
        "single_per_second": 0.5, "batched_per_second": None}

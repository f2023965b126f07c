"""The benchmarks print their tables as the Markdown bench/README.md shows (``--markdown``),
and the peers' run prints the tables of a finished run again from its JSON."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def common(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The benchmarks' shared module."""
    monkeypatch.syspath_prepend(str(_BENCH))
    return importlib.import_module("common")


@pytest.fixture
def report(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The peers' report, importable with ``common`` beside it."""
    monkeypatch.syspath_prepend(str(_BENCH))
    monkeypatch.syspath_prepend(str(_BENCH / "peers"))
    return importlib.import_module("report")


def test_a_markdown_table_has_its_title_header_and_right_aligned_figures(
        common: ModuleType) -> None:
    table = common.markdown_table("tarry timers: sqlite", [
        ("figure", "value", "target"), ("burst: wakes/s", "5,413", ">= 1 | limit")])
    assert table == ("**tarry timers: sqlite**\n\n"
                     "| figure | value | target |\n"
                     "| --- | ---: | ---: |\n"
                     "| burst: wakes/s | 5,413 | >= 1 \\| limit |\n")


SUMMARIES: dict[str, Any] = {
    "timers": {
        "tarry-sqlite": {"rounds": 3, "figures": {"lateness_p99_ms": 0.61,
                                                  "worker_peak_rss_mib": 57.46}},
        "huey": {"rounds": 3, "figures": {"lateness_p99_ms": 1039.2,
                                          "worker_peak_rss_mib": 27.9}}},
    "burst:50": {"tarry-sqlite": {"rounds": 3, "figures": {"wakes_per_second": 9000.0}}},
    "burst:200": {"tarry-sqlite": {"rounds": 3, "figures": {"wakes_per_second": 5413.2}},
                  "huey": {"rounds": 3, "figures": {"wakes_per_second": 193.0}}},
    "starts": {"tarry-sqlite": {"rounds": 3, "figures": {"single_per_second": 2694.0,
                                                         "batched_per_second": 46654.0}},
               "huey": {"rounds": 3, "figures": {"single_per_second": 3422.0,
                                                 "batched_per_second": None}}},
    "suspension": {"tarry-sqlite": {"rounds": 3, "figures": {}, "held_as": "row"},
                   "huey": {"rounds": 3, "figures": {}, "held_as": "row"}},
}


def test_the_comparison_takes_the_largest_burst_and_says_what_a_system_lacks(
        report: ModuleType) -> None:
    assert report.comparison(SUMMARIES) == [
        ["system", "held as", "timer lateness p99 ms", "burst of 200, wakes/s",
         "starts/s one at a time", "starts/s batched", "events delivered/s one at a time",
         "events delivered/s batched", "worker MiB"],
        ["tarry-sqlite", "row", "0.6", "5,413", "2,694", "46,654", "n/a", "n/a", "57.5"],
        ["huey", "row", "1039.2", "193", "3,422", "n/a", "n/a", "n/a", "27.9"]]


def test_the_tables_print_as_markdown_comparison_first(
        report: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    titles = {key: f"the {key} table" for key in SUMMARIES}
    report.tables(SUMMARIES, titles, markdown=True)
    printed = capsys.readouterr().out
    assert printed.startswith(f"**{report.COMPARISON_TITLE}**\n\n| system | held as |")
    assert "**the starts table**\n\n| system | one at a time /s | batched /s |" in printed
    assert "| huey | 3,422 | n/a |" in printed


def test_the_peers_run_prints_a_finished_runs_tables_without_measuring(tmp_path: Path) -> None:
    stored = tmp_path / "peers.json"
    stored.write_text(json.dumps({"summary": SUMMARIES, "sizes": {"burst_items": "50,200"}}),
                      encoding="utf-8")
    finished = subprocess.run([sys.executable, str(_BENCH / "peers" / "run.py"),
                               "--tables-from", str(stored), "--markdown"],
                              capture_output=True, text=True, timeout=60, check=False)
    assert finished.returncode == 0, finished.stderr
    assert "| tarry-sqlite | row | 0.6 | 5,413 |" in finished.stdout
    assert "**burst: 200 items due at one instant (wakes/s = N ÷ span)**" in finished.stdout


@pytest.mark.parametrize(("content", "why"), [
    (None, "FileNotFoundError"), ("{", "JSONDecodeError"), ('{"sizes": {}}', "KeyError: 'summary'"),
    ('{"summary": {}, "sizes": {"colour": 1}}', "TypeError")])
def test_tables_from_a_file_that_is_no_finished_run_say_so(
        tmp_path: Path, content: str | None, why: str) -> None:
    stored = tmp_path / "peers.json"
    if content is not None:
        stored.write_text(content, encoding="utf-8")
    finished = subprocess.run([sys.executable, str(_BENCH / "peers" / "run.py"),
                               "--tables-from", str(stored)],
                              capture_output=True, text=True, timeout=60, check=False)
    assert finished.returncode == 1
    assert finished.stderr.startswith(f"run.py: --tables-from {stored}: not the JSON of a "
                                      f"finished run ({why}")
    assert finished.stderr.rstrip().endswith(
        "give the file a run wrote with --json (bench/results/peers-<date>.json)")


@pytest.mark.slow
def test_a_benchmark_prints_its_table_as_markdown(tmp_path: Path) -> None:
    finished = subprocess.run([sys.executable, str(_BENCH / "loop_lag.py"), "--quick",
                               "--burst", "20", "--due-seconds", "0.5", "--idle-seconds", "0.2",
                               "--limit-seconds", "0.05", "--markdown",
                               "--json", str(tmp_path / "loop_lag.json")],
                              capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 0, finished.stderr
    title, blank, header, rule, *rows = finished.stdout.splitlines()
    assert title.startswith("**tarry loop_lag: sqlite, ")
    assert title.endswith(" quick preset, " + json.loads(
        (tmp_path / "loop_lag.json").read_text(encoding="utf-8"))["finished_at"][:10] + "**")
    assert (blank, header, rule) == ("", "| figure | value | target |", "| --- | ---: | ---: |")
    assert rows
    assert all(row.startswith("| ") for row in rows)

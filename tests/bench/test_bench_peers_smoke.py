"""The peers benchmark's harness still runs end to end, with tarry alone (no peer installed,
no network; tiny sizes; the figures themselves are not judged, but for how a waiting run is
held: a row, with the worker's threads and memory flat however many wait)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from backends import PostgresServer

_PEERS = Path(__file__).resolve().parents[2] / "bench" / "peers"
_TINY = ["--rounds", "1", "--timer-items", "6", "--timer-rate", "50", "--delay-s", "0.3",
         "--burst-items", "8", "--flood-items", "10", "--flood-cap-s", "10",
         "--paced-items", "7", "--paced-rate", "50",
         "--start-items", "5", "--batch", "4", "--batches", "2", "--waiting", "8",
         "--events", "3", "--event-rate", "30", "--event-cap-s", "10", "--event-batch", "2",
         "--small", "5",
         "--large", "105",
         "--idle-s", "0.2", "--limit-s", "0.05", "--timeout-s", "20", "--million", "400",
         "--million-baseline", "100", "--million-batch", "150"]
_FIGURES = {
    "starts": {"single_per_second", "batched_per_second", "first_submit_ms"},
    "timers": {"lateness_p50_ms", "lateness_p99_ms", "lateness_max_ms", "submits_per_second",
               "worker_peak_rss_mib", "worker_threads_max"},
    "paced:7": {"submitted", "lateness_p50_ms", "lateness_p99_ms", "lateness_max_ms",
                "submits_per_second", "worker_peak_rss_mib", "worker_threads_max"},
    "burst:8": {"wakes_per_second", "first_wake_late_ms", "last_wake_late_ms",
                "setup_slack_s", "worker_peak_rss_mib", "worker_threads_max"},
    "flood:10": {"submitted", "reached", "submits_per_second", "wall_s", "lateness_p50_ms",
                 "lateness_p99_ms", "lateness_max_ms", "worker_peak_rss_mib",
                 "worker_threads_max"},
    "events": {"resume_p50_ms", "resume_p99_ms", "resume_max_ms", "send_p50_ms", "load_sent",
               "reached", "delivered_per_second", "sends_per_second", "load_resume_p50_ms",
               "load_resume_p99_ms", "batched_load_sent", "batched_reached",
               "batched_delivered_per_second", "batched_sends_per_second",
               "batched_load_resume_p50_ms", "batched_load_resume_p99_ms"},
    "suspension": {"rss_small_mib", "rss_large_mib", "rss_ratio", "threads_small",
                   "threads_large", "processes_small", "processes_large",
                   "bytes_per_waiting_item", "rss_bytes_per_item", "threads_per_item",
                   "processes_per_item", "server_rss_small_mib", "server_rss_large_mib",
                   "server_threads_small", "server_threads_large",
                   "server_rss_bytes_per_item"},
    "million": {"waiting", "bytes_per_waiting_run", "store_mib", "rss_baseline_mib",
                "rss_mib", "rss_ratio", "peak_rss_baseline_mib", "peak_rss_mib",
                "threads_baseline", "threads", "create_per_second", "suspend_per_second",
                "setup_s"},
}
_NO_SERVER = {"server_rss_small_mib", "server_rss_large_mib", "server_threads_small",
              "server_threads_large", "server_rss_bytes_per_item"}
"""tarry's suspension has no server process measured (SQLite: none; PostgreSQL: out of
scope)."""


def _invoke(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``run.py`` with ``args``, no plots, its scratch folder and JSON in ``tmp_path``."""
    return subprocess.run(
        [sys.executable, str(_PEERS / "run.py"), *args, "--no-plots",
         "--scratch", str(tmp_path / "scratch"), "--json", str(tmp_path / "peers.json")],
        capture_output=True, text=True, timeout=55, check=False)


def _run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    finished = _invoke(tmp_path, *args)
    assert finished.returncode == 0, finished.stderr
    return finished, json.loads((tmp_path / "peers.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def sqlite_run(tmp_path_factory: pytest.TempPathFactory,
               ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """One run of every workload with tarry on SQLite, shared by the tests below."""
    return _run(tmp_path_factory.mktemp("peers"), "--systems", "tarry-sqlite", *_TINY)


_SQLITE_THREADS = 2
"""A tarry worker on SQLite: its event loop's thread and the store's one thread."""
_POSTGRES_THREADS = 10
"""On PostgreSQL: the loop's, the listener's, and the store's pool of ``pool_size`` (8) threads,
started as calls need them: more threads may be running with more waiting, never more than
these."""


def _assert_held_as_a_row(summary: dict[str, Any], threads: int) -> None:
    suspension = summary["suspension"]
    figures = suspension["figures"]
    assert suspension["held_as"] == "row"
    assert 0 < figures["threads_small"] <= figures["threads_large"] <= threads  # 100 more
    assert figures["processes_large"] == figures["processes_small"] == 1
    assert figures["bytes_per_waiting_item"] > 0
    million = summary["million"]["figures"]
    assert million["waiting"] == 400
    assert million["threads_baseline"] <= threads
    assert million["threads"] <= threads  # 300 more
    assert million["bytes_per_waiting_run"] > 0


@pytest.mark.slow
def test_the_peers_harness_measures_every_workload_of_tarry_and_writes_the_json(
        sqlite_run: tuple[subprocess.CompletedProcess[str], dict[str, Any]]) -> None:
    finished, result = sqlite_run

    summary = {key: by_system["tarry-sqlite"] for key, by_system in result["summary"].items()}
    assert {key: set(each["figures"]) for key, each in summary.items()} == _FIGURES
    figures = {name: value for key, each in summary.items()
               for name, value in each["figures"].items()
               if not (key == "suspension" and name in _NO_SERVER)}
    assert None not in figures.values()
    assert all(summary["suspension"]["figures"][name] is None for name in _NO_SERVER)
    assert summary["suspension"]["server"].startswith("none: the store is a SQLite file")
    assert all(figures[name] > 0 for name in (
        "single_per_second", "batched_per_second", "first_submit_ms", "submits_per_second",
        "wakes_per_second", "resume_p50_ms", "worker_peak_rss_mib", "rss_small_mib",
        "worker_threads_max", "wall_s", "create_per_second", "suspend_per_second", "rss_mib",
        "delivered_per_second", "sends_per_second", "load_resume_p50_ms"))
    assert summary["flood:10"]["reached"] == summary["paced:7"]["reached"] == "yes"
    assert summary["flood:10"]["figures"]["submitted"] == 10
    assert summary["paced:7"]["figures"]["submitted"] == 7
    assert [m["request"]["workload"] for m in result["measurements"]] == [
        "starts", "timers", "burst", "flood", "paced", "events", "suspension", "million"]
    assert len(result["measurements"][1]["reply"]["result"]["lateness_ms"]) == 6
    assert len(result["measurements"][4]["reply"]["result"]["lateness_ms"]) == 7
    # the process's first submit is timed apart from the one-at-a-time rate
    assert set(result["measurements"][0]["reply"]["result"]) == {
        "first_s", "single_s", "batched_s"}
    assert set(result["limit"]) == {"sqlite", "sqlite_batched"}
    assert result["limit"]["sqlite_batched"] > result["limit"]["sqlite"]  # writes/s, 100 a tx
    starts = summary["starts"]
    assert starts["tarry_ratio"] == starts["tarry_batched_ratio"] == {"tarry-sqlite": 1.0}
    assert summary["burst:8"]["tarry_ratio"] == summary["flood:10"]["tarry_ratio"] == {
        "tarry-sqlite": 1.0}
    assert starts["limit_ratio"] == {
        "single_per_second": pytest.approx(
            starts["figures"]["single_per_second"] / result["limit"]["sqlite"]),
        "batched_per_second": pytest.approx(
            starts["figures"]["batched_per_second"] / result["limit"]["sqlite_batched"])}
    assert set(summary["events"]["limit_ratio"]) == {"delivered_per_second",
                                                     "batched_delivered_per_second"}
    assert "timers" not in {key for key, each in summary.items() if "limit_ratio" in each}
    assert len(result["machine"]["load_average"]) == 3
    assert result["skipped"] == {}
    assert result["plots"] == {"skipped": "--no-plots"}
    assert result["environments"] == {}  # nothing was installed
    assert result["redis_started_by_run"] is False
    assert result["resumed"] is False
    assert not Path(finished.args[finished.args.index("--json") + 1]).with_suffix(
        ".partial.jsonl").exists()  # kept while the run went on, removed at its end
    assert "wakes/s" in finished.stdout
    assert "send→resume" in finished.stdout
    assert "held as" in finished.stdout
    assert "tarry-sqlite p99 ÷ this" in finished.stdout
    assert "batched ÷ limit" in finished.stdout


_INTERRUPTIBLE = [sys.executable, "-c", "import os, runpy, signal, sys; "
                  "signal.signal(signal.SIGINT, signal.default_int_handler); "
                  "sys.argv = sys.argv[1:]; sys.path[0] = os.path.dirname(sys.argv[0]); "
                  "runpy.run_path(sys.argv[0], run_name='__main__')"]
"""Python running the script named next as ``python script`` would, but with Ctrl-C's
signal acting even when the suite was started in the background (a shell starts a background
command with SIGINT ignored, and a process passes that on to the processes it starts)."""


def _interrupted(tmp_path: Path, *args: str, after: str) -> Path:
    """Start a run and stop it as Ctrl-C in its terminal would, once its measurement
    ``after`` is kept; where it kept what it measured."""
    partial = tmp_path / "peers.partial.jsonl"
    running = subprocess.Popen(
        [*_INTERRUPTIBLE, str(_PEERS / "run.py"), *args, "--no-plots",
         "--scratch", str(tmp_path / "scratch"), "--json", str(tmp_path / "peers.json")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 40
        while f'"label": "{after}"' not in (partial.read_text(encoding="utf-8")
                                            if partial.exists() else ""):
            assert running.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        os.killpg(running.pid, signal.SIGINT)
        running.wait(30)
    return partial


@pytest.mark.slow
def test_an_interrupted_run_resumed_keeps_what_it_measured_and_measures_the_rest(
        tmp_path: Path) -> None:
    options = ["--systems", "tarry-sqlite", "--workloads", "starts,timers", *_TINY]
    partial = _interrupted(tmp_path, *options, after="r1-starts-tarry-sqlite")
    kept = [json.loads(line) for line in partial.read_text(encoding="utf-8").splitlines()]
    assert [next(iter(line)) for line in kept[:3]] == ["plan", "round", "label"]

    finished, result = _run(tmp_path, *options, "--resume")

    assert "r1-starts-tarry-sqlite: kept from the interrupted run" in finished.stderr
    assert "r1-timers-tarry-sqlite: ok" in finished.stderr
    assert result["resumed"] is True
    assert result["limit_rounds"] == [kept[1]["limit"]]
    assert result["measurements"][0] == kept[2]["measurement"]
    assert [m["request"]["workload"] for m in result["measurements"]] == ["starts", "timers"]
    assert result["measurements"][1]["reply"]["ok"]
    assert not partial.exists()


@pytest.mark.slow
def test_a_resumed_run_measures_again_what_ended_in_an_error(tmp_path: Path) -> None:
    options = ["--systems", "tarry-sqlite", "--workloads", "starts,timers", *_TINY]
    partial = _interrupted(tmp_path, *options, after="r1-starts-tarry-sqlite")
    lines = [json.loads(line) for line in partial.read_text(encoding="utf-8").splitlines()]
    lines[2]["measurement"]["reply"] = {"ok": False, "error": "TimeoutError: 3 of 5 items"}
    partial.write_text("".join(json.dumps(line) + "\n" for line in lines[:3]),
                       encoding="utf-8")

    finished, result = _run(tmp_path, *options, "--resume")

    assert "r1-starts-tarry-sqlite: ok" in finished.stderr
    assert "kept from the interrupted run" not in finished.stderr
    assert [m["reply"]["ok"] for m in result["measurements"]] == [True, True]


@pytest.mark.slow
def test_a_resume_with_other_options_is_refused_and_keeps_the_interrupted_run(
        tmp_path: Path) -> None:
    options = ["--systems", "tarry-sqlite", "--workloads", "starts,timers", *_TINY]
    partial = _interrupted(tmp_path, *options, after="r1-starts-tarry-sqlite")
    before = partial.read_text(encoding="utf-8")

    refused = _invoke(tmp_path, *options, "--start-items", "6", "--resume")

    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        f"--resume: {partial} is a run with other sizes, rounds, systems or workloads; give "
        "the same options, or start afresh without --resume")
    assert partial.read_text(encoding="utf-8") == before


def test_a_resume_with_nothing_interrupted_is_refused(tmp_path: Path) -> None:
    refused = subprocess.run(
        [sys.executable, str(_PEERS / "run.py"), "--systems", "tarry-sqlite", "--resume",
         "--no-plots", "--scratch", str(tmp_path / "scratch"),
         "--json", str(tmp_path / "peers.json")],
        capture_output=True, text=True, timeout=55, check=False)

    assert refused.returncode == 1
    assert refused.stderr.strip() == (f"--resume: no interrupted run is kept at "
                                      f"{tmp_path / 'peers.partial.jsonl'}")


@pytest.mark.slow
def test_the_events_workload_sends_the_other_waiting_items_theirs_back_to_back_after_the_paced(
        sqlite_run: tuple[subprocess.CompletedProcess[str], dict[str, Any]]) -> None:
    finished, result = sqlite_run

    events = result["summary"]["events"]["tarry-sqlite"]
    assert events["reached"] == "yes"
    assert events["figures"]["load_sent"] == 5  # 8 waiting, 3 of them paced
    assert events["figures"]["reached"] == 1.0
    assert events["tarry_ratio"] == {"tarry-sqlite": 1.0}
    reply = next(m["reply"]["result"] for m in result["measurements"]
                 if m["request"]["workload"] == "events")
    assert (len(reply["latency_ms"]), len(reply["send_ms"])) == (3, 3)
    assert (len(reply["load_latency_ms"]), len(reply["load_send_ms"])) == (5, 5)
    assert reply["load_send_s"] > 0
    assert reply["load_span_s"] > 0
    assert "delivered/s" in finished.stdout
    assert "tarry-sqlite ÷ this" in finished.stdout


@pytest.mark.slow
def test_the_events_workload_then_sends_as_many_new_waiting_items_theirs_in_batches(
        sqlite_run: tuple[subprocess.CompletedProcess[str], dict[str, Any]]) -> None:
    finished, result = sqlite_run

    events = result["summary"]["events"]["tarry-sqlite"]
    assert events["batched"] == "yes"
    assert (events["figures"]["batched_load_sent"], events["figures"]["batched_reached"]) == (
        5, 1.0)
    assert events["figures"]["batched_delivered_per_second"] > 0
    assert events["tarry_batched_ratio"] == {"tarry-sqlite": pytest.approx(
        events["figures"]["batched_delivered_per_second"]
        / events["figures"]["delivered_per_second"])}
    reply = next(m["reply"]["result"] for m in result["measurements"]
                 if m["request"]["workload"] == "events")
    assert len(reply["batched_latency_ms"]) == 5
    assert len(reply["batched_send_ms"]) == 3  # 5 events in calls of 2
    assert "batched delivered/s" in finished.stdout
    assert "tarry-sqlite batched ÷ this" in finished.stdout


@pytest.mark.slow
def test_the_back_to_back_events_stop_at_their_cap_and_the_summary_says_so(
        tmp_path: Path) -> None:
    _, result = _run(tmp_path, "--systems", "tarry-sqlite", "--workloads", "events", *_TINY,
                     "--event-cap-s", "0")

    events = result["summary"]["events"]["tarry-sqlite"]
    assert events["reached"] == ("did not reach 5 within the cap of 0 s in 1 of 1 rounds "
                                 "(sent back to back 0)")
    figures = events["figures"]
    assert (figures["load_sent"], figures["reached"]) == (0, 0.0)
    assert figures["delivered_per_second"] is None
    assert figures["resume_p50_ms"] > 0  # the paced events were sent and resumed all the same
    assert events["tarry_ratio"] == {"tarry-sqlite": None}
    assert events["batched"] == ("did not reach 5 within the cap of 0 s in 1 of 1 rounds "
                                 "(sent in batches 0)")


@pytest.mark.slow
def test_tarry_on_sqlite_holds_a_waiting_run_as_a_row_with_its_worker_threads_flat(
        sqlite_run: tuple[subprocess.CompletedProcess[str], dict[str, Any]]) -> None:
    _, result = sqlite_run

    summary = {key: by_system["tarry-sqlite"] for key, by_system in result["summary"].items()}
    _assert_held_as_a_row(summary, _SQLITE_THREADS)
    figures = summary["suspension"]["figures"]
    assert figures["threads_small"] == figures["threads_large"]


@pytest.mark.slow
@pytest.mark.postgres
def test_tarry_on_postgresql_holds_a_waiting_run_as_a_row_and_delivers_events_back_to_back(
        tmp_path: Path, postgres_server: PostgresServer) -> None:
    _, result = _run(tmp_path, "--systems", "tarry-postgresql", "--workloads",
                     "events,suspension,million", "--postgres", postgres_server.url, *_TINY)

    summary = {key: by_system["tarry-postgresql"]
               for key, by_system in result["summary"].items()}
    _assert_held_as_a_row(summary, _POSTGRES_THREADS)
    assert summary["events"]["reached"] == "yes"
    assert summary["events"]["figures"]["load_sent"] == 5
    assert summary["events"]["figures"]["delivered_per_second"] > 0
    assert summary["events"]["figures"]["batched_load_sent"] == 5
    assert summary["events"]["figures"]["batched_delivered_per_second"] > 0
    assert summary["suspension"]["server"].startswith("not measured: PostgreSQL's backends")
    used = {measurement["database"] for measurement in result["measurements"]}
    assert len(used) == 3  # one scratch database a measurement (others' runs may own more)
    assert used.isdisjoint(postgres_server.databases("tarry_bench_peers"))  # all dropped


@pytest.mark.slow
def test_a_system_whose_store_is_unreachable_is_reported_skipped_with_the_reason(
        tmp_path: Path) -> None:
    result_file = tmp_path / "peers.json"
    nobody = "postgresql://postgres@127.0.0.1:1/postgres"  # nothing listens on port 1

    finished = subprocess.run(
        [sys.executable, str(_PEERS / "run.py"), "--systems", "tarry-postgresql",
         "--workloads", "starts", "--rounds", "1", "--postgres", nobody, "--no-plots",
         "--scratch", str(tmp_path / "scratch"), "--json", str(result_file)],
        capture_output=True, text=True, timeout=50, check=False)

    assert finished.returncode == 0, finished.stderr
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert list(result["skipped"]) == ["tarry-postgresql"]
    assert result["skipped"]["tarry-postgresql"].startswith(
        f"PostgreSQL at {nobody} is not reachable: ")
    assert result["measurements"] == []
    assert "skipped tarry-postgresql: PostgreSQL at" in finished.stdout


def test_a_second_run_on_a_scratch_folder_in_use_is_refused_and_touches_nothing(
        tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    logs = scratch / "runs" / "r1-million-tarry-postgresql"  # the first run's, in use
    logs.mkdir(parents=True)
    with (scratch / "run.lock").open("a+", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write("pid 4242")
        lock.flush()
        finished = _invoke(tmp_path, "--systems", "tarry-sqlite", "--workloads", "starts")
    assert finished.returncode == 1
    assert finished.stderr.strip() == (
        f"run.py: the scratch folder {scratch} is in use by another run (pid 4242); wait "
        "for it to end, or give this one its own --scratch")
    assert logs.is_dir()
    assert not (tmp_path / "peers.json").exists()

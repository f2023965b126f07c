"""An event trigger's ``debounce``: a burst of events of one key starts one run, with the
last event's inputs, ``period`` after the last (at most ``max`` after the first); on the
virtual clock and both stores."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from textwrap import dedent

import pytest

from tarry.clock import iso
from tarry.model import EventState, RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
MANIFESTS = dedent("""
    events:
      forge.push:
        correlate_on: [repo]
""")
BUILD = """\
flow: build
inputs:
  repo: { type: string, required: true }
  sha: { type: string, required: true }
on:
  - event: forge.push
    inputs: { repo: "{{ event.repo }}", sha: "{{ event.sha }}" }
    debounce: { key: "{{ event.repo }}", period: 5m, max: 30m }
steps:
  - built: { log: "building {{ repo }} at {{ sha }}" }
"""


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "build.yaml").write_text(BUILD, encoding="utf-8")
    with Harness(tmp_path, start=START, manifests=MANIFESTS, store_url=store_url) as h:
        yield h


def builds(harness: Harness) -> list[str]:
    """The ids of the build runs, oldest first."""
    return [r.id for r in reversed(harness.engine.store.list_runs(flow="build", limit=1000))]


def push(harness: Harness, sha: str, repo: str = "acme/web", **extra: str) -> list[str]:
    """Push ``sha`` now; the runs the event started (or gathered into)."""
    return list(harness.send("forge.push", {"repo": repo, "sha": sha}, **extra).started)


async def test_a_burst_of_pushes_starts_one_build_with_the_last_one_after_the_quiet_period(
        harness: Harness) -> None:
    started = []
    for number in range(4):
        started += push(harness, f"sha{number}")
        await harness.advance(timedelta(minutes=2))
    [run_id] = builds(harness)
    assert started == [run_id] * 4
    record = harness.record(run_id)
    assert (record.status, record.inputs["sha"]) == (RunStatus.PENDING, "sha3")
    assert record.due_at == START + timedelta(minutes=6 + 5)  # the last push, at +6m, plus 5m
    await harness.advance(timedelta(minutes=2))  # +10m: still quiet for less than 5m
    assert harness.record(run_id).status is RunStatus.PENDING
    await harness.run_until(START + timedelta(minutes=11))
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    assert harness.record(run_id).inputs == {"repo": "acme/web", "sha": "sha3"}
    started_at = next(e.at for e in harness.engine.store.history(run_id) if e.kind == "started")
    assert started_at == START + timedelta(minutes=11)
    debounced = [e.data for e in harness.engine.store.history(run_id) if e.kind == "debounced"]
    assert [entry["until"] for entry in debounced] == [
        iso(START + timedelta(minutes=minutes)) for minutes in (7, 9, 11)]


async def test_max_caps_the_delay_of_an_endless_burst(harness: Harness) -> None:
    for number in range(20):  # a push every 4 minutes for 80 minutes: never 5 quiet ones
        push(harness, f"sha{number}")
        await harness.advance(timedelta(minutes=4))
    runs = builds(harness)
    starts = [next(e.at for e in harness.engine.store.history(run) if e.kind == "started")
              for run in runs[:-1]]
    assert starts == [START + timedelta(minutes=30), START + timedelta(minutes=62)]
    # each with the last push before it started: at +28m (sha7) and at +60m (sha15)
    assert [harness.record(run).inputs["sha"] for run in runs[:-1]] == ["sha7", "sha15"]
    assert harness.record(runs[-1]).status is RunStatus.PENDING


async def test_two_keys_are_debounced_independently(harness: Harness) -> None:
    [web] = push(harness, "w1", repo="acme/web")
    await harness.advance(timedelta(minutes=3))
    [api] = push(harness, "a1", repo="acme/api")
    assert web != api
    await harness.advance(timedelta(minutes=2))
    assert harness.record(web).status is RunStatus.SUCCEEDED
    assert harness.record(api).status is RunStatus.PENDING
    await harness.advance(timedelta(minutes=3))
    assert harness.record(api).status is RunStatus.SUCCEEDED


async def test_an_event_delivered_twice_counts_once(harness: Harness) -> None:
    [run_id] = push(harness, "sha1", id="delivery-1")
    await harness.advance(timedelta(minutes=4))
    again = harness.send("forge.push", {"repo": "acme/web", "sha": "sha1"}, id="delivery-1")
    assert again.state is EventState.DUPLICATE
    await harness.advance(timedelta(minutes=1))  # 5m after the first (and only) push
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    assert builds(harness) == [run_id]
    assert "debounced" not in harness.history_kinds(run_id)


async def test_a_push_after_the_build_started_opens_a_new_burst(harness: Harness) -> None:
    [first] = push(harness, "sha1")
    await harness.advance(timedelta(minutes=5))
    assert harness.record(first).status is RunStatus.SUCCEEDED
    [second] = push(harness, "sha2")
    assert second != first
    assert harness.record(second).due_at == START + timedelta(minutes=10)


async def test_pushes_sent_at_once_from_several_processes_gather_into_one_run(
        harness: Harness, tmp_path: Path, store_url: str) -> None:
    senders = []
    for number in range(6):
        folder = tmp_path / f"sender{number}"
        (folder / "flows").mkdir(parents=True)
        (folder / "flows" / "build.yaml").write_text(BUILD, encoding="utf-8")
        senders.append(Harness(folder, start=START, manifests=MANIFESTS, store_url=store_url))
    barrier = threading.Barrier(len(senders))
    started: list[tuple[str, ...]] = []

    def send(sender: Harness, number: int) -> None:
        barrier.wait()
        started.append(sender.send("forge.push", {"repo": "acme/web",
                                                  "sha": f"sha{number}"}).started)

    threads = [threading.Thread(target=send, args=(sender, number))
               for number, sender in enumerate(senders)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for sender in senders:
            sender.close()
    [run_id] = builds(harness)
    assert started == [(run_id,)] * len(senders)
    assert harness.history_kinds(run_id).count("debounced") == len(senders) - 1
    await harness.advance(timedelta(minutes=5))
    assert harness.record(run_id).status is RunStatus.SUCCEEDED


async def test_a_key_beyond_the_limit_starts_a_refused_run_saying_why(
        tmp_path: Path, store_url: str) -> None:
    (tmp_path / "flows").mkdir()
    by_sha = BUILD.replace('key: "{{ event.repo }}"', 'key: "{{ event.sha }}"')
    (tmp_path / "flows" / "build.yaml").write_text(by_sha, encoding="utf-8")
    with Harness(tmp_path, start=START, manifests=MANIFESTS, store_url=store_url) as harness:
        [run_id] = push(harness, "s" * 600)
        record = harness.record(run_id)
        assert (record.status, record.reason) == (RunStatus.REFUSED, "trigger-invalid")
        [refused] = [e.data for e in harness.engine.store.history(run_id)
                     if e.kind == "refused"]
        assert refused["message"].startswith("the debounce key")
        assert "512" in refused["message"]

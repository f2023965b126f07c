"""Which flows an event starts, looked up on every send: a send costs a ``stat`` of each folder
of the flows tree, not of every flow file; a file added, removed or renamed counts at once,
an edit in place within ``TRIGGERS_FRESH``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tarry.engine import catalog
from tarry.engine.triggers import TRIGGERS_FRESH
from tarry.files import FileSignature
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

MANIFESTS = """
events:
  label:
    correlate_on: [repo]
"""

DEPLOY = """
flow: deploy
on:
  - event: label
steps:
  - done: { exit: deployed }
"""

PLAIN = """
flow: {name}
steps:
  - done: {{ exit: plain }}
"""

TRIGGERED = """
flow: {name}
on:
  - event: label
steps:
  - done: {{ exit: triggered }}
"""

OTHER_FLOWS = 40


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    flows = tmp_path / "flows"
    flows.mkdir()
    (flows / "deploy.yaml").write_text(DEPLOY, encoding="utf-8")
    for index in range(OTHER_FLOWS):
        (flows / f"plain{index}.yaml").write_text(PLAIN.format(name=f"plain{index}"),
                                                 encoding="utf-8")
    h = Harness(tmp_path, start=START, manifests=MANIFESTS, store_url=store_url)
    yield h
    h.close()


def started_flows(harness: Harness) -> list[str]:
    """The flows of the runs one ``label`` event starts now."""
    event = harness.send("label", {"repo": "acme/web"})
    return sorted(harness.record(run_id).flow for run_id in event.started)


def edit_in_place(path: Path, text: str) -> None:
    """Rewrite ``path`` (a later modification time, as a save a second later would give)."""
    before = path.stat().st_mtime_ns
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


def watching_stats(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every path the flows catalog will ``stat`` or read from now on, in order (the real
    calls still made)."""
    looked_at: list[Path] = []
    real, read = catalog.file_signature, catalog.read_source

    def counted(path: str | Path) -> FileSignature | None:
        looked_at.append(Path(path))
        return real(path)

    def counted_read(path: Path, *args: Any, **kwargs: Any) -> str:
        looked_at.append(path)
        return read(path, *args, **kwargs)

    monkeypatch.setattr(catalog, "file_signature", counted)
    monkeypatch.setattr(catalog, "read_source", counted_read)
    return looked_at


def test_a_send_stats_the_folder_not_every_flow_file(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    assert started_flows(harness) == ["deploy"]  # the first send reads every file
    looked_at = watching_stats(monkeypatch)
    for _ in range(5):
        assert started_flows(harness) == ["deploy"]
    assert looked_at == [harness.directory / "flows"] * 5


def test_every_file_is_looked_at_again_once_the_freshness_window_has_passed(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    started_flows(harness)
    looked_at = watching_stats(monkeypatch)
    harness.clock.set(harness.clock.now() + TRIGGERS_FRESH)
    started_flows(harness)
    flows = harness.directory / "flows"
    assert set(looked_at) == {flows, *flows.iterdir()}


def test_a_file_that_does_not_name_the_type_is_not_read_again_while_it_is_unchanged(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    started_flows(harness)
    read: list[Path] = []
    real = catalog.read_source
    monkeypatch.setattr(catalog, "read_source",
                        lambda path, *args: read.append(path) or real(path, *args))
    harness.clock.set(harness.clock.now() + TRIGGERS_FRESH)
    edit_in_place(harness.directory / "flows" / "plain0.yaml", PLAIN.format(name="plain0"))
    started_flows(harness)
    assert read == [harness.directory / "flows" / "plain0.yaml"]


def test_a_trigger_added_in_place_starts_runs_once_the_window_has_passed(
        harness: Harness) -> None:
    assert started_flows(harness) == ["deploy"]
    edit_in_place(harness.directory / "flows" / "plain0.yaml", TRIGGERED.format(name="plain0"))
    assert started_flows(harness) == ["deploy"]  # within the window: as it was
    harness.clock.set(harness.clock.now() + TRIGGERS_FRESH)
    assert started_flows(harness) == ["deploy", "plain0"]


def test_a_trigger_removed_in_place_stops_starting_runs_once_the_window_has_passed(
        harness: Harness) -> None:
    assert started_flows(harness) == ["deploy"]
    edit_in_place(harness.directory / "flows" / "deploy.yaml", PLAIN.format(name="deploy"))
    harness.clock.set(harness.clock.now() + TRIGGERS_FRESH)
    assert started_flows(harness) == []


def test_a_flow_file_added_starts_runs_on_the_next_send(harness: Harness) -> None:
    assert started_flows(harness) == ["deploy"]
    (harness.directory / "flows" / "later.yaml").write_text(TRIGGERED.format(name="later"),
                                                           encoding="utf-8")
    assert started_flows(harness) == ["deploy", "later"]


def test_a_flow_file_removed_stops_starting_runs_on_the_next_send(harness: Harness) -> None:
    assert started_flows(harness) == ["deploy"]
    (harness.directory / "flows" / "deploy.yaml").unlink()
    assert started_flows(harness) == []


class WallClock:
    """The one thing the triggers ask of a clock, from an instant the test sets back, as a
    wall clock can be."""

    def __init__(self, instant: datetime) -> None:
        self.instant = instant

    def now(self) -> datetime:
        return self.instant


def test_a_clock_set_back_a_window_looks_at_every_file_again(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = WallClock(harness.clock.now())
    monkeypatch.setattr(harness.engine.triggers, "clock", clock)
    assert started_flows(harness) == ["deploy"]
    edit_in_place(harness.directory / "flows" / "plain0.yaml", TRIGGERED.format(name="plain0"))
    clock.instant -= TRIGGERS_FRESH / 2
    assert started_flows(harness) == ["deploy"]
    clock.instant -= TRIGGERS_FRESH / 2
    assert started_flows(harness) == ["deploy", "plain0"]

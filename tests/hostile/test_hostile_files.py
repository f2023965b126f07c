"""Hostile files in a project: a flow, manifest, scenario or ``tarry.toml`` too large is
refused with its size and the limit, before it is read, and costs nothing to the commands
that do not need it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from tarry.cli import app
from tarry.config import load_settings
from tarry.engine import catalog
from tarry.engine.runtime import Engine
from tarry.errors import LoadError
from tarry.language.manifests import load_manifests
from tarry.scenarios import load_scenario

QUICK_FLOW = """\
flow: quick
steps:
  - hello:
      set: { text: hi }
"""
EVENTS = """\
events:
  ping:
    correlate_on: [id]
"""
BIG = 20 * 1_048_576
"""The probe's file: 20 MiB in ``flows/`` made every ``tarry send`` take 10 s."""


def huge_flow(size: int) -> str:
    """A flow file of ``size`` bytes that parses (a long string in its description)."""
    head = "flow: huge\ndescription: \""
    tail = "\"\nsteps:\n  - x:\n      set: { a: 1 }\n"
    return head + "x" * (size - len(head) - len(tail)) + tail


@pytest.fixture
def project(tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project (the working directory) with a small flow, a manifest and a 20 MiB flow."""
    root = tmp_path / "project"
    (root / "flows").mkdir(parents=True)
    (root / "flows" / "quick.yaml").write_text(QUICK_FLOW)
    (root / "flows" / "huge.yaml").write_text(huge_flow(BIG))
    (root / "events.yaml").write_text(EVENTS)
    (root / "tarry.toml").write_text(f'[tarry]\ndatabase = "{store_url}"\n')
    monkeypatch.chdir(root)
    return root


def tarry(*args: str) -> Result:
    """The command line, in-process."""
    return CliRunner().invoke(app, list(args))


REFUSED = ("the file is 20,971,520 bytes, over the limit of 1,048,576 bytes "
           "([limits] file_bytes)")


def test_validate_refuses_a_flow_file_over_the_limit_and_checks_the_others(
        project: Path) -> None:
    result = tarry("validate")
    assert result.exit_code == 1
    assert result.stdout == f"flows/huge.yaml:1:1: {REFUSED}\n"
    assert "1 problem in 1 of 2 flow files" in result.stderr


def test_starting_the_flow_of_a_file_over_the_limit_is_refused_with_its_size(
        project: Path) -> None:
    result = tarry("start", "flows/huge.yaml")
    assert result.exit_code == 1
    assert result.stderr == f"flows/huge.yaml:1:1: {REFUSED}\n"


def test_a_send_costs_a_stat_of_a_huge_flow_file_not_a_read(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real = Path.open

    def watched(self: Path, *args: Any, **kwargs: Any) -> Any:
        opened.append(self.name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", watched)
    result = tarry("send", "ping", "--data", '{"id": "1"}')
    assert result.exit_code == 0, result.stderr
    assert "huge.yaml" not in opened
    assert tarry("start", "quick").exit_code == 0


def test_the_limit_is_a_setting(project: Path) -> None:
    (project / "tarry.toml").write_text((project / "tarry.toml").read_text()
                                        + "[limits]\nfile_bytes = 40\n")
    (project / "flows" / "huge.yaml").unlink()
    result = tarry("start", "quick")
    assert result.exit_code == 1
    assert result.stderr == (f"{project / 'flows' / 'quick.yaml'}:1:1: the file is 54 bytes, "
                             "over the limit of 40 bytes ([limits] file_bytes)\n")


def test_an_engine_refuses_a_manifest_over_the_limit(project: Path) -> None:
    (project / "events.yaml").write_text(EVENTS + "#" * 1_048_576)
    with pytest.raises(LoadError) as caught:
        Engine.from_settings(load_settings(project, {}))
    assert [str(p) for p in caught.value.problems] == [
        f"{project / 'events.yaml'}:1:1: the file is 1,048,615 bytes, over the limit of "
        "1,048,576 bytes ([limits] file_bytes)"]


def test_a_manifest_file_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "events.yaml"
    path.write_text(EVENTS + "#" * 100)
    with pytest.raises(LoadError) as caught:
        load_manifests([path], max_bytes=100)
    assert str(caught.value) == (f"{path}:1:1: the file is 139 bytes, over the limit of "
                                 "100 bytes ([limits] file_bytes)")


def test_a_scenario_file_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("scenario: s\nflow: quick\n" + "#" * 2_000_000)
    with pytest.raises(LoadError) as caught:
        load_scenario(path)
    assert str(caught.value) == (f"{path}:1:1: the file is 2,000,024 bytes, over the limit "
                                 "of 1,048,576 bytes ([limits] file_bytes)")


TRIGGERED = """\
flow: greet
on:
  - event: ping
steps:
  - done: { exit: greeted }
"""


def many_steps(size: int) -> str:
    """A flow file just under ``size`` bytes of steps: the probe's slow kind to parse."""
    steps = "".join(f"  - s{index}:\n      set: {{ a: {index} }}\n" for index in range(size // 30))
    text = "flow: many\nsteps:\n" + steps
    return text[:text.rindex("\n  - ", 0, size)] + "\n"


def test_a_send_parses_only_the_flow_files_that_name_its_type(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "flows" / "many.yaml").write_text(many_steps(1_000_000))
    (project / "flows" / "greet.yaml").write_text(TRIGGERED)
    parsed: list[str] = []
    real = catalog.load_flow

    def watched(path: Path, **options: Any) -> Any:
        parsed.append(path.name)
        return real(path, **options)

    monkeypatch.setattr(catalog, "load_flow", watched)
    engine = Engine.from_settings(load_settings(project, {}))
    try:
        event = engine.send("ping", {"id": "1"})
        started = [engine.store.get_run(run_id).flow for run_id in event.started]
    finally:
        engine.close()
    assert parsed == ["greet.yaml"]
    assert started == ["greet"]

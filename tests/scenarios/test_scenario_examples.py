"""The scenarios shipped with the examples pass under ``tarry test``.

Every example project with a ``scenarios/`` folder is run as a user would run it (a copy of
the folder as the working directory, ``tarry test`` with no arguments), so an example that
gains scenarios is covered without changing this file.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tarry.cli import app
from tarry.scenarios import load_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WITH_SCENARIOS = sorted(path.parent for path in EXAMPLES.glob("*/scenarios") if path.is_dir())


@pytest.fixture
def isolated_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Undo what importing an example's actions does: its folder on the import path and its
    modules (which another example may name alike) in ``sys.modules``."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]


def test_the_waiting_and_triggers_examples_have_scenarios() -> None:
    assert {EXAMPLES / "waiting", EXAMPLES / "triggers"} <= set(WITH_SCENARIOS)


@pytest.mark.usefixtures("isolated_imports")
@pytest.mark.parametrize("example", WITH_SCENARIOS, ids=lambda path: path.name)
def test_every_scenario_of_the_example_passes(example: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / example.name
    shutil.copytree(example, project, ignore=shutil.ignore_patterns(".tarry", "__pycache__"))
    monkeypatch.chdir(project)
    result = CliRunner().invoke(app, ["test"])
    assert result.exit_code == 0, result.output
    verdicts = [line.split()[0] for line in result.stdout.splitlines()]
    assert verdicts, result.stderr
    assert set(verdicts) == {"PASS"}, result.stdout


@pytest.mark.usefixtures("isolated_imports")
def test_tarry_test_of_the_triggers_example_passes(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``tarry test examples/triggers``, from the folder above the example: its scenarios
    start their runs only through the example's triggers."""
    shutil.copytree(EXAMPLES / "triggers", tmp_path / "examples" / "triggers",
                    ignore=shutil.ignore_patterns(".tarry", "__pycache__"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["test", "examples/triggers"])
    assert result.exit_code == 0, result.output
    assert [line.split()[:2] for line in result.stdout.splitlines()] == [
        ["PASS", "deploy-labelled-friday-evening"], ["PASS", "deploy-labelled-inside-the-window"],
        ["PASS", "report-after-downtime"], ["PASS", "report-ledger-never-closed"],
        ["PASS", "report-weekdays-across-dst"]]
    assert all(load_scenario(path).flow is None
               for path in (EXAMPLES / "triggers" / "scenarios").glob("*.yaml"))


def test_every_waiting_flow_has_a_scenario() -> None:
    example = EXAMPLES / "waiting"
    named = {load_scenario(path).flow for path in (example / "scenarios").glob("*.yaml")}
    covered = {Path(flow).stem for flow in named}
    assert covered == {path.stem for path in (example / "flows").glob("*.yaml")}

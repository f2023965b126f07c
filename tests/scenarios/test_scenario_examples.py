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


def test_the_waiting_examples_have_scenarios() -> None:
    assert EXAMPLES / "waiting" in WITH_SCENARIOS


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


def test_every_waiting_flow_has_a_scenario() -> None:
    example = EXAMPLES / "waiting"
    named = {load_scenario(path).flow for path in (example / "scenarios").glob("*.yaml")}
    covered = {Path(flow).stem for flow in named}
    assert covered == {path.stem for path in (example / "flows").glob("*.yaml")}

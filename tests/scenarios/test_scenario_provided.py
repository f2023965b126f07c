"""An action provided elsewhere (``provided_actions``) in a scenario: the flow that calls it
loads, and the scenario must stub it, or it cannot run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tarry.cli import app

CHARGING = """\
flow: charging
steps:
  - charge:
      billing.charge: { amount: 5 }
  - done:
      exit: charged
"""

SCENARIO = """\
scenario: NAME
flow: charging
STUB
expect:
  exit: charged
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose flow calls billing.charge, an action no module of it provides."""
    (tmp_path / "tarry.toml").write_text('[tarry]\nprovided_actions = ["billing.charge"]\n')
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "charging.yaml").write_text(CHARGING)
    (tmp_path / "scenarios").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def scenario(project: Path, name: str, stub: str) -> None:
    """Write ``scenarios/<name>.yaml`` with the ``stub`` lines given."""
    text = SCENARIO.replace("NAME", name).replace("STUB", stub)
    (project / "scenarios" / f"{name}.yaml").write_text(text)


def test_a_stubbed_action_provided_elsewhere_runs(project: Path) -> None:
    scenario(project, "stubbed", "stub:\n  billing.charge: { id: ch_1 }")
    result = CliRunner().invoke(app, ["test"])
    assert result.exit_code == 0, result.output
    assert re.fullmatch(r"PASS stubbed \(\d+\.\d\ds\)\n", result.stdout)


def test_an_unstubbed_one_means_the_scenario_cannot_run(project: Path) -> None:
    scenario(project, "unstubbed", "")
    result = CliRunner().invoke(app, ["test"])
    assert result.exit_code == 1
    assert re.sub(r"\(\d+\.\d\ds\)", "(T)", result.stdout) == (
        "ERROR unstubbed (T)\n"
        "  scenarios/unstubbed.yaml:2:7: flow 'charging' calls 'billing.charge', an action "
        "provided elsewhere (provided_actions in tarry.toml): stub it (stub: { billing.charge: "
        "… })\n")

"""``tarry doctor`` reports a pool no step names (a warning) and a step naming a pool the
project does not declare (an error, with a suggestion)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tarry.cli import app

CONFIG = """\
[tarry]
database = "sqlite:///.tarry/tarry.db"

[limits.pools]
vendor-api = 2
spare = 1
"""

USES = """\
flow: uses
steps:
  - call: { log: { message: hi }, limit: vendor-api }
"""

MISSPELT = """\
flow: misspelt
steps:
  - call: { log: { message: hi }, limit: vendor-apj }
"""


def test_doctor_warns_of_an_unused_pool_and_refuses_an_undeclared_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tarry.toml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "uses.yaml").write_text(USES, encoding="utf-8")
    (tmp_path / "flows" / "misspelt.yaml").write_text(MISSPELT, encoding="utf-8")

    result = CliRunner().invoke(app, ["doctor"])

    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith(("error", "warning"))] == [
        "error: flows/misspelt.yaml:3:42: unknown pool 'vendor-apj' (did you mean "
        "'vendor-api'?)",
        "warning: pool 'spare' of [limits.pools] is named by no step's limit:; remove it, or "
        "add 'limit: spare' to the steps it should pace",
        "warning: the store (SQLite " + str(tmp_path / ".tarry" / "tarry.db") + ") does not "
        "exist yet: the first command that starts a run or sends an event creates it (or run "
        "`tarry migrate`)"]

"""A throwaway project to run the command line in, and a way to invoke it."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from tarry.cli import app

CONFIG = """\
[tarry]
database = "sqlite:///state/tarry.db"
"""

WAITING_FLOW = """\
flow: cooling
steps:
  - greet:
      set: { text: hi }
  - cooling_off:
      wait: { for: 2d }
  - done:
      exit: cooled
"""

QUICK_FLOW = """\
flow: quick
inputs:
  name: { type: string, default: world }
  count: { type: integer, default: 1 }
steps:
  - greet:
      log: { message: "Hello, {{ name }}!" }
  - short:
      wait: { for: 10ms }
  - done:
      exit: greeted
"""

FAILING_FLOW = """\
flow: broken
steps:
  - boom:
      fail: "no luck"
"""


@dataclass
class Project:
    """A project folder (the working directory) with helpers to write flows and run tarry."""

    root: Path

    def flow(self, name: str, text: str) -> Path:
        """Write ``flows/<name>.yaml``."""
        path = self.root / "flows" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def tarry(self, *args: str) -> Result:
        """Run the command line in-process; stdout and stderr are kept apart."""
        return CliRunner().invoke(app, list(args))

    def json(self, *args: str) -> Any:
        """Run a ``--json`` command that must succeed; its one JSON document."""
        result = self.tarry(*args, "--json")
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """An empty project in ``tmp_path`` (the working directory) with its store in ``state/``.

    ``COLUMNS`` (which pytest-xdist sets to 80) is removed: output to a pipe is laid out wide.
    """
    monkeypatch.delenv("COLUMNS", raising=False)
    (tmp_path / "tarry.toml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return Project(tmp_path)

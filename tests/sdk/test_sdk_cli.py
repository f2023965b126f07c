"""The command line runs Python flows of the app ``[tarry] app`` names: run, start, worker,
show; and a wrong ``app`` setting is one clear error line."""

from __future__ import annotations

import json
import sys
import textwrap
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from tarry.cli import app as cli

FLOWS = """\
from tarry import App, Context

app = App()
not_an_app = 42


def greeting(name):
    return f"Hello, {name}!"


@app.flow("greet")
async def greet(ctx: Context, name: str = "world") -> dict:
    text = await ctx.step("greet", greeting, name)
    await ctx.wait("pause", "10ms")
    return {"text": text}


@app.flow("nap")
async def nap(ctx: Context) -> str:
    await ctx.wait("nap", "1d")
    return "rested"


@app.flow("segments")
async def segments(ctx: Context, segment: int = 1) -> int:
    await ctx.step("work", lambda: segment)
    if segment < 2:
        ctx.continue_as_new(segment=segment + 1)
    return segment
"""


@dataclass
class PythonProject:
    """A project folder whose ``[tarry] app`` names the App in a module of its own."""

    root: Path
    module: str

    def tarry(self, *args: str) -> Result:
        return CliRunner().invoke(cli, list(args))

    def json(self, *args: str) -> Any:
        result = self.tarry(*args, "--json")
        assert result.exit_code in (0, 1), result.stderr
        return json.loads(result.stdout)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PythonProject:
    """A fresh project; the module has a name of its own so no test sees another's import."""
    module = f"flows_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(FLOWS, encoding="utf-8")
    (tmp_path / "tarry.toml").write_text(textwrap.dedent(f"""\
        [tarry]
        database = "sqlite:///state/tarry.db"
        app = "{module}:app"
        """), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, module, raising=False)
    return PythonProject(tmp_path, module)


def test_run_executes_a_python_flow_and_prints_its_result(project: PythonProject) -> None:
    document = project.json("run", "greet", "-i", "name=Ada", "--follow")
    assert (document["flow"], document["status"], document["exit"]) == (
        "greet", "succeeded", "completed")
    assert document["result"] == {"text": "Hello, Ada!"}
    text = project.tarry("run", "greet")
    assert text.exit_code == 0
    assert "result: " not in text.stdout  # it waits: no result yet
    assert "waiting for timer at step 'pause'" in text.stdout


def test_run_shows_the_result_in_text(project: PythonProject) -> None:
    result = project.tarry("run", "greet", "--follow")
    assert result.exit_code == 0, result.stderr
    assert 'result: {"text": "Hello, world!"}' in result.stdout


def test_start_then_worker_then_show(project: PythonProject) -> None:
    started = project.tarry("start", "nap")
    assert started.exit_code == 0, started.stderr
    run_id = started.stdout.strip()
    worked = project.tarry("worker", "--once")
    assert worked.exit_code == 0, worked.stderr
    document = project.json("show", run_id)
    assert (document["status"], document["waiting_for"]["kind"],
            document["waiting_for"]["step"]) == ("waiting", "timer", "nap")


def test_show_links_a_run_and_the_run_it_continued_as(project: PythonProject) -> None:
    first = project.json("run", "segments", "--follow")
    assert (first["status"], first["exit"]) == ("succeeded", "continued")
    successor = project.json("show", first["id"])["continued_as"]
    assert project.tarry("worker", "--once").exit_code == 0
    following = project.json("show", successor)
    assert (following["exit"], following["result"], following["continued_from"]) == (
        "completed", 2, first["id"])
    assert f"continued as {successor}" in project.tarry("show", first["id"]).stdout
    assert f"continued from {first['id']}" in project.tarry("show", successor).stdout


def test_an_unknown_name_is_one_error_line(project: PythonProject) -> None:
    result = project.tarry("run", "gret")
    assert result.exit_code == 1
    assert result.stderr == (f"error: no flow named 'gret' in {project.root / 'flows'} or on "
                             "the app (did you mean 'greet'?)\n")


@pytest.mark.parametrize(("reference", "message"), [
    ("missing_module_xyz:app",
     "error: [tarry] app = 'missing_module_xyz:app': cannot import it (No module named "
     "'missing_module_xyz')\n"),
    ("{module}:nope",
     "error: [tarry] app = '{module}:nope': cannot import it (module '{module}' has no "
     "attribute 'nope')\n"),
    ("{module}:not_an_app",
     "error: [tarry] app = '{module}:not_an_app' is not a tarry App (found int)\n"),
])
def test_a_wrong_app_setting_is_one_error_line(project: PythonProject, reference: str,
                                               message: str) -> None:
    config = project.root / "tarry.toml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        f"{project.module}:app", reference.format(module=project.module)), encoding="utf-8")
    result = project.tarry("run", "greet")
    assert result.exit_code == 1
    assert result.stderr == message.format(module=project.module)

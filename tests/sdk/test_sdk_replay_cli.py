"""``tarry replay``: the deploy check from the command line, on both stores. Runs recorded by
one version of a project's module are replayed against the next: a reorder exits 1 naming
the run and the operations, its patched version exits 0, usage errors exit 2."""

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

V1 = """\
from tarry import App, Context

app = App()


@app.flow("order")
async def order(ctx: Context) -> str:
    await ctx.step("reserve", lambda: "reserved")
    await ctx.step("charge", lambda: "charged")
    await ctx.wait("pause", "1d")
    return "reserve first"
"""

RESERVE = '    await ctx.step("reserve", lambda: "reserved")\n'
CHARGE = '    await ctx.step("charge", lambda: "charged")\n'
REORDERED = V1.replace(RESERVE + CHARGE, CHARGE + RESERVE)

PATCHED = V1.replace('''    await ctx.step("reserve", lambda: "reserved")
    await ctx.step("charge", lambda: "charged")
    await ctx.wait("pause", "1d")
    return "reserve first"''', '''    if ctx.patched("charge-first"):
        await ctx.step("charge", lambda: "charged")
        await ctx.step("reserve", lambda: "reserved")
        await ctx.wait("pause", "1d")
        return "charge first"
    await ctx.step("reserve", lambda: "reserved")
    await ctx.step("charge", lambda: "charged")
    await ctx.wait("pause", "1d")
    return "reserve first"''')

CHANGED = ("the flow changed at operation 1: the run recorded step 'reserve', the code now "
           "asks for step 'charge'; its code changed while the run was in progress")


@dataclass
class Project:
    """A project whose ``[tarry] app`` is the module of the version deployed last."""

    root: Path
    store_url: str

    def deploy(self, source: str) -> None:
        """Put ``source`` in a module of its own and name its app in tarry.toml."""
        module = f"shop_{uuid.uuid4().hex[:8]}"
        (self.root / f"{module}.py").write_text(source, encoding="utf-8")
        (self.root / "tarry.toml").write_text(textwrap.dedent(f"""\
            [tarry]
            app = "{module}:app"
            """), encoding="utf-8")

    def tarry(self, *args: str) -> Result:
        return CliRunner().invoke(cli, list(args))

    def json(self, *args: str) -> Any:
        result = self.tarry(*args, "--json")
        assert result.exit_code in (0, 1), result.stderr
        return json.loads(result.stdout)

    def waiting_run(self) -> str:
        """Start a run of ``order`` and let a worker take it to its wait."""
        started = self.tarry("start", "order")
        assert started.exit_code == 0, started.stderr
        assert self.tarry("worker", "--once").exit_code == 0
        run_id = started.stdout.strip()
        assert self.json("show", run_id)["status"] == "waiting"
        return run_id


@pytest.fixture
def project(tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TARRY_DATABASE", store_url)
    monkeypatch.setattr(sys, "path", list(sys.path))
    made = Project(tmp_path, store_url)
    made.deploy(V1)
    return made


def test_a_reorder_exits_1_naming_the_run_and_the_operations(project: Project) -> None:
    run_id = project.waiting_run()
    project.deploy(REORDERED)
    result = project.tarry("replay")
    assert (result.exit_code, result.stdout) == (1, (
        f"{run_id} (order, waiting): nondeterminism at reserve: {CHANGED}\n"
        "replayed 1 run of Python flows: 1 would hit nondeterminism, 0 would fail "
        "otherwise\n"))
    assert project.json("replay", run_id[:10]) == {
        "replayed": 1, "nondeterminism": 1, "failed": 0, "skipped": 0,
        "runs": [{"run": run_id, "flow": "order", "status": "waiting",
                  "verdict": "nondeterminism", "operation": "reserve", "message": CHANGED}]}


def test_the_patched_version_exits_0_and_ended_runs_are_replayed_when_asked_for(
        project: Project) -> None:
    old = project.waiting_run()
    project.deploy(PATCHED)
    new = project.waiting_run()
    result = project.tarry("replay")
    assert (result.exit_code, result.stdout) == (0, (
        "replayed 2 runs of Python flows: 0 would hit nondeterminism, 0 would fail "
        "otherwise\n"))
    assert project.tarry("cancel", old).exit_code == 0
    assert [run["run"] for run in project.json("replay")["runs"]] == [new]
    ended = project.json("replay", "--flow", "order", "--status", "cancelled",
                         "--status", "succeeded")
    assert [(run["run"], run["status"], run["verdict"]) for run in ended["runs"]] == [
        (old, "cancelled", "ok")]


@pytest.mark.parametrize(("args", "message"), [
    (["--status", "sleeping"], "Invalid value for '--status'"),
    (["--bogus"], "No such option: --bogus"),
])
def test_usage_errors_exit_2(project: Project, args: list[str], message: str) -> None:
    result = project.tarry("replay", *args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_an_unknown_run_exits_1_with_one_error_line(project: Project) -> None:
    project.waiting_run()
    result = project.tarry("replay", "nosuchrun")
    assert (result.exit_code, result.stderr) == (1, "error: no run with id 'nosuchrun'\n")


def test_a_store_that_does_not_exist_is_an_error_and_is_not_created(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TARRY_DATABASE", f"sqlite:///{tmp_path}/nowhere/tarry.db")
    result = CliRunner().invoke(cli, ["replay"])
    assert (result.exit_code, result.stderr) == (1, (
        f"error: no store at {tmp_path}/nowhere/tarry.db yet (no tarry.toml found in "
        f"{tmp_path} or any folder above it, so the defaults apply); a command that starts a "
        "run or sends an event creates it\n"))
    assert not (tmp_path / "nowhere").exists()

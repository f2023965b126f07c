"""``tarry test``: run scenario files on a virtual clock and report each one.

Every scenario file is loaded first; a file with problems stops everything before anything
runs (``file:line:col: message`` lines, exit 1). Then each scenario runs on the real engine
with a temporary SQLite store of its own, and one line per scenario is printed as it finishes
(``PASS name (0.03s)``, ``FAIL name (…)`` followed by each failed expectation, ``ERROR
name (…)`` when it could not run). Exit 0 when every scenario passed, 1 otherwise.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from tarry.cli.session import note
from tarry.config import CONFIG_FILE, load_settings
from tarry.errors import LoadError, Problem
from tarry.scenarios import (
    Scenario,
    ScenarioResult,
    junit_xml,
    load_scenario,
    project_settings,
    result_lines,
    run_scenario,
    summary,
)

__all__ = ["SCENARIOS_FOLDER", "find_scenario_files", "scenario_tests"]

SCENARIOS_FOLDER = "scenarios"
"""Where ``tarry test`` looks for scenario files by default, under the project root."""

_SUFFIXES = (".yaml", ".yml")


def scenario_tests(
        paths: Annotated[list[Path] | None, typer.Argument(
            metavar="SCENARIO", exists=True,
            help="Scenario files or folders; a project folder stands for its scenarios folder "
                 "(default: the project's).")]
        = None,
        junit: Annotated[Path | None, typer.Option(
            "--junit", metavar="PATH", help="Also write the results as JUnit XML to PATH.")]
        = None) -> None:
    """Run scenario files on a virtual clock; print PASS or FAIL per scenario."""
    folders = paths or [load_settings().root / SCENARIOS_FOLDER]
    scenarios = _load_all(find_scenario_files(folders))
    if not scenarios:
        note(f"no scenario files found in {', '.join(_shown(path) for path in folders)}")
        return
    results = asyncio.run(_run_all(scenarios))
    note(summary(results))
    if junit is not None:
        junit.write_text(junit_xml(results), encoding="utf-8")
    if not all(result.passed for result in results):
        raise typer.Exit(1)


def find_scenario_files(paths: Sequence[Path]) -> list[Path]:
    """Files as given; folders replaced by the YAML files below them, sorted — a project's
    folder (one holding ``tarry.toml``) by those of its scenarios folder."""
    found: list[Path] = []
    for given in paths:
        path = given / SCENARIOS_FOLDER if (given / CONFIG_FILE).is_file() else given
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix in _SUFFIXES))
        elif path.is_file():
            found.append(path)
    return found


def _load_all(files: Sequence[Path]) -> list[Scenario]:
    """Every scenario of ``files``; ``LoadError`` with the problems of all of them."""
    scenarios: list[Scenario] = []
    problems: list[Problem] = []
    for path in files:
        try:
            scenarios.append(load_scenario(Path(_shown(path)),
                                           project_settings(path).limits.file_bytes))
        except LoadError as exc:
            problems.extend(exc.problems)
    if problems:
        raise LoadError(problems)
    return scenarios


async def _run_all(scenarios: Sequence[Scenario]) -> list[ScenarioResult]:
    """Run each scenario in turn on a store of its own, printing its lines as it ends."""
    results = []
    for scenario in scenarios:
        with tempfile.TemporaryDirectory(prefix="tarry-test-") as directory:
            result = await run_scenario(scenario, project_settings(Path(scenario.path)),
                                        directory=Path(directory))
        for line in result_lines(result):
            typer.echo(line)
        results.append(result)
    return results


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it lies below it."""
    try:
        return str(path.absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(path)

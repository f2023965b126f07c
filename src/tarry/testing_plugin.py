"""tarry's pytest plugin: the time-skipping harness and scenario files, as fixtures.

Installed with tarry (the ``pytest11`` entry point ``tarry``), so any project's tests can ask
for:

- ``tarry_harness``: a :class:`~tarry.testing.Harness` (the real engine and a SQLite store
  in the test's ``tmp_path``, on a virtual clock), closed after the test;
- ``tarry_scenario``: a function that runs one scenario file like ``tarry test`` does and
  returns its :class:`~tarry.scenarios.ScenarioResult`, failing the test (with the same
  report ``tarry test`` prints) when the scenario does not pass.

A test written ``async def`` (the harness's methods that execute runs are coroutines) runs on
tarry's event loop, with no other plugin or configuration; a test that pytest-asyncio or
anyio's plugin runs (marked, or in pytest-asyncio's auto mode) is left to it.

::

    def test_approval(tarry_scenario):
        tarry_scenario("scenarios/approved.yaml")

    async def test_two_day_wait(tarry_harness):
        run = tarry_harness.start(tarry_harness.flow(FLOW))
        await tarry_harness.run_until_idle()
        assert tarry_harness.record(run).exit == "deleted"
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tarry import eventloop
from tarry.scenarios import (
    ScenarioResult,
    load_scenario,
    project_settings,
    result_lines,
    run_scenario,
)
from tarry.testing import Harness

__all__ = ["ScenarioRunner", "pytest_pyfunc_call", "tarry_harness", "tarry_scenario"]

ScenarioRunner = Callable[[str | Path], ScenarioResult]
"""``run(path)``: run the scenario file at ``path``; fail the test unless it passes."""


def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run an ``async def`` test on tarry's event loop, unless another plugin runs it:
    pytest-asyncio turns the tests it runs into plain functions before this hook, and anyio's
    plugin runs those that ask for ``anyio_backend`` before it."""
    function = pyfuncitem.obj
    if not inspect.iscoroutinefunction(function) or pyfuncitem.get_closest_marker("anyio"):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    eventloop.run(function(**arguments))
    return True


@pytest.fixture
def tarry_harness(tmp_path: Path) -> Iterator[Harness]:
    """A harness on a virtual clock with its store in ``tmp_path``."""
    harness = Harness(tmp_path)
    yield harness
    harness.close()


@pytest.fixture
def tarry_scenario(tmp_path: Path) -> ScenarioRunner:
    """Runs a scenario file (relative paths from the working directory) on a fresh store.

    The project is the one whose ``tarry.toml`` lies nearest above the file. Call it from a
    plain (synchronous) test: it runs the scenario's event loop itself.
    """
    def run(path: str | Path) -> ScenarioResult:
        scenario = load_scenario(Path(path), project_settings(Path(path)).limits.file_bytes)
        directory = tmp_path / f"scenario-{scenario.name}"
        directory.mkdir(exist_ok=True)
        result = asyncio.run(run_scenario(scenario, project_settings(Path(path)),
                                          directory=directory))
        if not result.passed:
            pytest.fail("\n".join(result_lines(result)), pytrace=False)
        return result
    return run

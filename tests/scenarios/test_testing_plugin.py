"""The pytest plugin installed with tarry: the ``tarry_harness`` and ``tarry_scenario`` fixtures,
used from a user's test suite (run by pytester in a project of its own)."""

from __future__ import annotations

import textwrap

import pytest
from scenario_projects import APPROVED, ScenarioProject

import tarry.testing_plugin

pytest_plugins = ["pytester"]

USER_TESTS = '''
import pytest

NAP = """
flow: nap
steps:
  - rest:
      wait: { for: 2d }
  - done:
      exit: rested
"""


def test_a_passing_scenario(tarry_scenario):
    result = tarry_scenario("scenarios/approved.yaml")
    assert result.passed
    assert result.document["exit"] == "approved"


def test_a_failing_scenario(tarry_scenario):
    tarry_scenario("scenarios/wrong.yaml")


@pytest.mark.asyncio
async def test_the_harness(tarry_harness):
    run = tarry_harness.start(tarry_harness.flow(NAP))
    await tarry_harness.run_until_idle()
    assert tarry_harness.record(run).exit == "rested"
    assert tarry_harness.clock.now().isoformat() == "2026-01-03T00:00:00+00:00"
'''

WRONG = """\
scenario: wrong
flow: deal-approval
inputs: { deal: { name: ACME } }
stub: { slack.post: { ts: t1 } }
expect: { exit: approved }
"""


def test_the_plugin_is_registered_as_an_entry_point(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.pluginmanager.is_registered(tarry.testing_plugin)


ASYNC_TESTS = '''
import asyncio

from tarry.testing import Harness

NAP = "flow: nap\\nsteps:\\n  - rest:\\n      wait: { for: 2d }\\n  - done:\\n      exit: rested\\n"


async def test_an_async_test_with_the_fixture(tarry_harness):
    run = tarry_harness.start(tarry_harness.flow(NAP))
    await tarry_harness.run_until_idle()
    assert tarry_harness.record(run).exit == "rested"


async def test_an_async_test_with_a_harness_of_its_own(tmp_path):
    with Harness(tmp_path) as harness:
        run = harness.start(harness.flow(NAP))
        await harness.run_until_idle()
        assert harness.record(run).exit == "rested"


async def test_a_failing_async_test():
    await asyncio.sleep(0)
    assert 1 == 2
'''


@pytest.mark.parametrize("ini", ["", "asyncio_mode = strict\n",
                                 "asyncio_mode = auto\nasyncio_default_fixture_loop_scope = "
                                 "function\n"], ids=["no-ini", "strict", "auto"])
def test_an_async_test_runs_without_configuration(pytester: pytest.Pytester, ini: str) -> None:
    if ini:
        pytester.makeini(f"[pytest]\n{ini}")
    pytester.makepyfile(test_async=ASYNC_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*assert 1 == 2*"])


def test_a_users_suite_gets_the_fixtures(pytester: pytest.Pytester) -> None:
    project = ScenarioProject.create(pytester.path)
    project.scenario("approved", APPROVED)
    project.scenario("wrong", WRONG)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_flows=textwrap.dedent(USER_TESTS))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.re_match_lines([
        r"FAIL wrong \(\d+\.\d\ds\)",
        r'  scenarios/wrong.yaml:5:17: exit: expected "approved", got "no-answer"',
    ])

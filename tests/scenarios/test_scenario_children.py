"""Scenarios with child flows, on both stores: a called flow runs for real in the
scenario's harness (on its virtual clock), or is stubbed (``stub_flows``) so that each child
run of it ends at once with the scripted outcome; the loader refuses a stub that says two
things at once, with the exact message."""

from __future__ import annotations

from pathlib import Path

import pytest
from scenario_projects import ScenarioProject

from markdown_blocks import Document
from tarry.errors import LoadError
from tarry.scenarios.loader import parse_scenario

GUIDE = Document("docs/testing.md", __file__)
STUBBED = GUIDE.block("yaml", after="### Called flows")

GREET = """\
flow: greet
inputs:
  name: { type: string, required: true }
steps:
  - nap:
      wait: { for: 2d }
  - done:
      exit: greeted
"""

ONBOARD = """\
flow: onboard
steps:
  - kid:
      call: { flow: greet, inputs: { name: ada } }
      optional: true
  - after:
      set: { failed: "{{ kid.failed is defined }}" }
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ScenarioProject:
    monkeypatch.chdir(tmp_path)
    project = ScenarioProject.create(tmp_path)
    project.write("flows/greet.yaml", GREET)
    project.write("flows/onboard.yaml", ONBOARD)
    return project


async def test_a_called_flow_runs_for_real_on_the_virtual_clock(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text("""\
scenario: real-child
flow: onboard
expect:
  status: succeeded
  bindings: { kid.status: succeeded, kid.exit: greeted, after.failed: false }
""", store_url=store_url)
    assert result.passed, result.mismatches
    assert result.document is not None
    assert result.document["updated_at"] == "2026-01-03T00:00:00.000Z"  # the child's 2d nap


async def test_a_stubbed_flow_ends_its_child_at_once(project: ScenarioProject,
                                                      store_url: str) -> None:
    result = await project.run_text("""\
scenario: stubbed-child
flow: onboard
stub_flows:
  greet: { exit: waved }
expect:
  status: succeeded
  bindings: { kid.status: succeeded, kid.exit: waved }
""", store_url=store_url)
    assert result.passed, result.mismatches
    assert result.document is not None
    assert result.document["updated_at"] == "2026-01-01T00:00:00.000Z"  # no nap


async def test_a_stubbed_failure_fails_the_call_as_child_failed(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text("""\
scenario: failed-child
flow: onboard
stub_flows:
  greet: { status: failed, message: card declined }
expect:
  status: succeeded
  bindings: { kid.failed: true, kid.error.type: child-failed, after.failed: true }
""", store_url=store_url)
    assert result.passed, result.mismatches
    assert result.document is not None
    assert result.document["bindings"]["kid"]["error"]["message"].endswith(
        "failed: stubbed: card declined")


@pytest.mark.parametrize(("stub", "message"), [
    ("{ exit: a, result: 1 }", "s.yaml:4:10: stub_flows 'greet' gives 'exit' or 'result', "
                               "not both (a flow that returns a result exits 'completed')"),
    ("{ status: failed, exit: a }", "s.yaml:4:10: stub_flows 'greet': a failed child has no "
                                    "'exit' or 'result'"),
    ("{ message: x }", "s.yaml:4:10: stub_flows 'greet': 'message' is the failure's; add "
                       "status: failed"),
    ("{ status: done }", "s.yaml:4:20: 'status' must be one of succeeded, failed, got 'done'"),
    ("{ exits: a }", "s.yaml:4:12: unknown key 'exits' in stub_flows 'greet' (did you mean "
                     "'exit'?)"),
])
def test_a_stub_of_a_flow_is_read_strictly(stub: str, message: str) -> None:
    with pytest.raises(LoadError) as caught:
        parse_scenario(f"scenario: s\nflow: onboard\nstub_flows:\n  greet: {stub}\n"
                       "expect: { status: succeeded }\n", "s.yaml")
    assert str(caught.value) == message


async def test_the_guides_stubbed_flow_scenario_passes(project: ScenarioProject,
                                                       store_url: str) -> None:
    result = await project.run_text(STUBBED, store_url=store_url)
    assert result.passed, result.mismatches

"""docs/testing.md shows only what works: its scenario files load and pass, its messages and
its ``tarry test`` output are what tarry prints, its pytest examples run — in a project made by
``tarry init``, with only what the guide says to add."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from markdown_blocks import ROOT, TARRY, Document, add_config, add_event_types, fresh_project
from tarry.cli import app
from tarry.errors import LoadError, StoreError
from tarry.scenarios import parse_scenario
from tarry.testing import Harness

GUIDE = Document("docs/testing.md", __file__)
SCENARIO = GUIDE.block("yaml", starting="scenario: ")
FLOW = GUIDE.block("yaml", starting="flow: deal-approval")
MANIFESTS = GUIDE.block("yaml", starting="events:\n  slack.approval")
PROVIDED = GUIDE.block("toml", after="`slack.post` is an action the project's workers have")
STUBS = GUIDE.block("yaml", starting="stub:")
EVENTS = GUIDE.block("yaml", starting="events:\n  - after")
EXPECT = GUIDE.block("yaml", starting="expect:")
LOAD_PROBLEMS = GUIDE.block("text", after="### Loading is strict")
SYNOPSIS = GUIDE.block("text", after="## tarry test")
OUTPUT = GUIDE.block("text", after="as it finishes, followed by what failed")
SCENARIO_TESTS, HARNESS_TEST = GUIDE.blocks("python", after="## pytest", before="## The harness")
HARNESS = GUIDE.block("python", after="## The harness")
HEAD = "scenario: s\nflow: deal-approval\n"
TRIGGERED = [block for block in GUIDE.blocks("yaml", starting="scenario: ")
             if "\nflow:" not in block]
"""The guide's scenarios that start no run of their own (against examples/triggers)."""
CHECKS = GUIDE.block("yaml", starting="checks:")
DOWNTIME = GUIDE.block("yaml", starting="downtime:")
NOT_FIRED = GUIDE.block("text", after="This scenario expects a\nlabel spelt")

NO_ANSWER = """\
scenario: no-answer
flow: deal-approval
inputs: { deal: { name: ACME } }
stub:
  slack.post: { ts: "1" }
events:
  - { after: 1h, type: slack.approval, data: { message: "1", approved: true } }
expect:
  exit: EXIT
  bindings: { approval.status: STATUS }
"""


def no_answer(exit_name: str, status: str) -> str:
    """A scenario of the approval flow where the approver answers yes after an hour."""
    return NO_ANSWER.replace("EXIT", exit_name).replace("STATUS", status)


class Project:
    """A project folder (the working directory) made by ``tarry init``, to write files into."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, relative: str, text: str) -> None:
        """Write ``text`` to ``relative`` under the root."""
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def scenario(self, name: str, text: str) -> None:
        """Write ``scenarios/<name>.yaml``."""
        self.write(f"scenarios/{name}.yaml", text)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A new project (``tarry init``) with the guide's flow, event type, provided action and
    scenario added."""
    root = fresh_project(tmp_path / "sales")
    monkeypatch.chdir(root)
    add_event_types(root, MANIFESTS)
    add_config(root, PROVIDED)
    project = Project(root)
    project.write("flows/deal-approval.yaml", FLOW)
    project.scenario("approved", SCENARIO)
    return project


def test_the_guides_project_validates_once_slack_post_is_declared(project: Project) -> None:
    def validate() -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(TARRY), "validate"], cwd=project.root, capture_output=True,
                              text=True, timeout=60, check=False)
    valid = validate()
    assert (valid.returncode, valid.stderr) == (0, "2 flow files and 1 event manifest valid\n")
    project.write("tarry.toml", (project.root / "tarry.toml").read_text().replace(
        PROVIDED.splitlines()[1] + "\n", ""))
    refused = validate()
    assert refused.returncode == 1
    assert "unknown action or key 'slack.post'" in refused.stdout


def test_the_guide_scenario_passes(project: Project) -> None:
    result = CliRunner().invoke(app, ["test"])
    assert result.exit_code == 0, result.output
    assert re.fullmatch(r"PASS approved-after-two-hours \(\d+\.\d\ds\)\n", result.stdout)


def test_the_stub_events_and_expect_examples_load() -> None:
    one_event = "events:\n  - { after: 1h, type: slack.approval, data: {} }\n"
    for text in (HEAD + STUBS + EVENTS + "expect: { status: succeeded }\n",
                 HEAD + STUBS + one_event + EXPECT):
        assert parse_scenario(text, "s.yaml").name == "s"


def test_the_strict_loading_messages_are_real() -> None:
    broken = (SCENARIO.replace("target:", "taget:").replace("after: 2h", "after: 1mo")
              .replace("calls: { slack.post", "calls: { slack.pots"))
    with pytest.raises(LoadError) as caught:
        parse_scenario(broken, "scenarios/approved.yaml")
    assert str(caught.value) + "\n" == LOAD_PROBLEMS


def test_the_tarry_test_output_is_real(project: Project) -> None:
    project.scenario("no-answer", no_answer("no-answer", "timeout"))
    project.scenario("typo", "scenario: typo\nflow: deal-aproval\nexpect: { status: failed }\n")
    result = CliRunner().invoke(app, ["test"])
    assert result.exit_code == 1
    shown = OUTPUT
    actual = re.sub(r"\(\d+\.\d\ds\)", "(T)", result.stdout).replace(
        str(project.root / "flows"), "/srv/sales/flows")
    assert actual == re.sub(r"\(\d+\.\d\ds\)", "(T)", shown)
    assert result.stderr == "3 scenarios: 1 passed, 1 failed, 1 could not run\n"


@pytest.fixture
def triggers_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of examples/triggers (the working directory), its own scenarios removed."""
    root = tmp_path / "triggers"
    shutil.copytree(ROOT / "examples" / "triggers", root,
                    ignore=shutil.ignore_patterns(".tarry", "scenarios"))
    (root / "scenarios").mkdir()
    monkeypatch.chdir(root)
    return root


def test_the_trigger_scenarios_of_the_guide_pass(triggers_example: Path) -> None:
    names = [block.split("\n", 1)[0].removeprefix("scenario: ") for block in TRIGGERED]
    assert names == ["deploy-labelled-friday-evening", "relabelled",
                     "report-weekdays-across-dst"]
    for name, block in zip(names, TRIGGERED, strict=True):
        if name != "relabelled":
            (triggers_example / "scenarios" / f"{name}.yaml").write_text(block)
    result = CliRunner().invoke(app, ["test"])
    assert result.exit_code == 0, result.output


def test_the_output_of_a_trigger_that_did_not_fire_is_real(triggers_example: Path) -> None:
    (triggers_example / "scenarios" / "relabelled.yaml").write_text(TRIGGERED[1])
    result = CliRunner().invoke(app, ["test"])
    assert result.exit_code == 1
    assert re.sub(r"\(\d+\.\d\ds\)", "(T)", result.stdout) == re.sub(
        r"\(\d+\.\d\ds\)", "(T)", NOT_FIRED)


def test_the_checks_and_downtime_examples_load() -> None:
    scenario = parse_scenario(HEAD + 'start: "2026-10-23T06:00:00Z"\n' + CHECKS + DOWNTIME
                              + "expect: { status: succeeded }\n", "s.yaml")
    assert [check.name for check in scenario.checks] == ["ledger", "deploy-window", "ticket"]
    assert len(scenario.downtime) == 1


@pytest.mark.timeout(120)  # pytest, in a process of its own
def test_the_pytest_examples_run(project: Project) -> None:
    project.scenario("no-answer", no_answer("approved", "received"))
    project.write("test_guide.py", "\n\n".join(textwrap.dedent(block)
                                                for block in (HARNESS_TEST, SCENARIO_TESTS)))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                            cwd=project.root, capture_output=True, text=True, timeout=100,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b3 passed\b", result.stdout), result.stdout


def test_the_synopsis_is_the_commands_usage() -> None:
    usage = subprocess.run([str(TARRY), "test", "--help"], capture_output=True, text=True,
                           timeout=60, check=True).stdout
    assert usage.startswith("Usage: tarry test [OPTIONS] [SCENARIO...]\n")
    options = re.findall(r"^  (--\w+ \w+)  ", usage, re.MULTILINE)
    assert f"tarry test [SCENARIO…] {' '.join(f'[{o}]' for o in options)}\n" == SYNOPSIS


async def test_the_harness_example_runs_the_guides_flow(tmp_path: Path) -> None:
    namespace = {"tmp_path": tmp_path, "datetime": datetime, "UTC": UTC,
                 "EVENTS_YAML": MANIFESTS}
    exec(compile(HARNESS, "docs/testing.md", "exec"), namespace)
    harness = namespace["harness"]
    try:
        run_id = harness.start(harness.flow(FLOW), {"deal": {"name": "ACME"}})
        await harness.run_due()
        waiting = harness.record(run_id).waiting_for
    finally:
        harness.close()
    assert (waiting["kind"], waiting["match"], waiting["since"]) == (
        "event", {"message": "1"}, "2026-03-02T09:00:00.000Z")


async def test_a_harness_used_as_a_context_manager_is_closed_however_the_block_ends(
        tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), Harness(tmp_path) as harness:
        raise RuntimeError("a failing test body")
    with pytest.raises(StoreError):  # released: its store refuses further calls
        harness.engine.store.list_runs()

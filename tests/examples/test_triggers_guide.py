"""docs/triggers.md: its flows load as printed, against its manifest (the triggers example's),
a broken trigger records what the page shows, and ``tarry triggers`` and ``tarry validate``
print what it quotes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from markdown_blocks import ROOT, TARRY, Document, add_event_types, fresh_project, run_console
from tarry.language.loader import BUILTIN_ACTIONS, parse_flow
from tarry.language.manifests import load_manifests, parse_manifests
from tarry.testing import Harness

GUIDE = Document("docs/triggers.md", __file__)
DEPLOY = GUIDE.block("yaml", starting="flow: deploy")
REPORT = GUIDE.block("yaml", starting="flow: report")
MANIFEST = GUIDE.block("yaml", starting="events:")
REFUSED_ENTRY = GUIDE.block("json", after="**A broken trigger is seen.**")
LISTING = GUIDE.block("console", after="## Seeing triggers")
REFUSALS = GUIDE.block("text", after="## Refused at load")
SCENARIO = GUIDE.block("yaml", starting="scenario:")
EXAMPLE_MANIFESTS = load_manifests([ROOT / "examples" / "triggers" / "events.yaml"])
SCENARIOS = ROOT / "examples" / "triggers" / "scenarios"

pytestmark = pytest.mark.timeout(240)  # processes, on a machine that may be busy

MISTAKES = [  # (file, what replaces what), in the order of the page's lines
    ("deploy", "event: github.issues", "event: github.isues"),
    ("report", '"0 9 * * mon-fri"', '"61 9 * * *"'),
    ("report", "    timezone: Europe/Berlin\n", ""),
    ("report", "Europe/Berlin", "Europe/Berlim"),
    ("report", "catch_up: latest", "catch_up: sometimes"),
    ("deploy", "on:\n", "triggers:\n"),
]


@pytest.mark.parametrize("block", [DEPLOY, REPORT], ids=["deploy", "report"])
def test_each_flow_of_the_guide_loads_as_printed(block: str) -> None:
    flow = parse_flow(block, "docs/triggers.md", actions=BUILTIN_ACTIONS,
                      manifests=EXAMPLE_MANIFESTS)
    assert flow.triggers


def test_the_manifest_of_the_guide_parses_and_is_the_examples() -> None:
    declared = parse_manifests(MANIFEST, "docs/triggers.md")
    assert declared["github.issues"].signature == EXAMPLE_MANIFESTS["github.issues"].signature


async def test_a_trigger_that_cannot_compute_its_target_records_the_refusal_shown(
        tmp_path: Path) -> None:
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "deploy.yaml").write_text(DEPLOY, encoding="utf-8")
    harness = Harness(tmp_path, manifests=MANIFEST)
    try:
        [run_id] = harness.send("github.issues", {
            "action": "labeled", "label": {"name": "deploy"}, "issue": {"number": "seven"},
            "repository": {"full_name": "acme/web"}}).started
        last = harness.document(run_id)["history"][-1]
    finally:
        harness.close()
    shown = json.loads(REFUSED_ENTRY)
    assert {**last, "at": shown["at"]} == shown


def project(root: Path, deploy: str = DEPLOY, report: str = REPORT) -> Path:
    """A new project (``tarry init``) with the page's manifest and its two flows added."""
    fresh_project(root)
    (root / "flows" / "deploy.yaml").write_text(deploy, encoding="utf-8")
    (root / "flows" / "report.yaml").write_text(report, encoding="utf-8")
    add_event_types(root, MANIFEST)
    return root


def test_tarry_triggers_lists_the_triggers_as_shown(tmp_path: Path) -> None:
    run_console(LISTING, project(tmp_path / "p"))


def test_each_refusal_shown_is_what_tarry_validate_says_of_its_mistake(tmp_path: Path) -> None:
    said = []
    for number, (name, wrong, instead) in enumerate(MISTAKES):
        flows = {"deploy": DEPLOY, "report": REPORT}
        assert wrong in flows[name]
        flows[name] = flows[name].replace(wrong, instead)
        result = subprocess.run([str(TARRY), "validate"], cwd=project(tmp_path / str(number),
                                                                      **flows),
                                capture_output=True, text=True, timeout=60, check=False)
        assert result.returncode == 1, result.stderr
        said.append(result.stdout)
    assert "".join(said) == REFUSALS


def test_the_scenario_of_the_guide_is_the_examples() -> None:
    name = SCENARIO.split("\n", 1)[0].removeprefix("scenario: ")
    written = (SCENARIOS / f"{name}.yaml").read_text(encoding="utf-8")
    assert "".join(line for line in written.splitlines(keepends=True)
                   if not line.startswith("#")) == SCENARIO

"""docs/triggers.md: its flows load as printed, against the triggers example's manifests."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_blocks import blocks

from tarry.language.loader import BUILTIN_ACTIONS, parse_flow
from tarry.language.manifests import load_manifests, parse_manifests

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "docs" / "triggers.md").read_text(encoding="utf-8")
MANIFESTS = load_manifests([ROOT / "examples" / "triggers" / "events.yaml"])
FLOWS = [block for block in blocks(GUIDE, "yaml") if block.startswith("flow:")]
SCENARIOS = ROOT / "examples" / "triggers" / "scenarios"


def test_the_guide_shows_an_event_and_a_schedule_flow() -> None:
    assert [block.splitlines()[0] for block in FLOWS] == ["flow: deploy", "flow: report"]


@pytest.mark.parametrize("block", FLOWS, ids=["deploy", "report"])
def test_each_flow_of_the_guide_loads_as_printed(block: str) -> None:
    flow = parse_flow(block, "docs/triggers.md", actions=BUILTIN_ACTIONS,
                      manifests=MANIFESTS)
    assert flow.triggers


def test_the_manifest_of_the_guide_parses_and_is_the_examples() -> None:
    [manifest] = [block for block in blocks(GUIDE, "yaml") if block.startswith("events:")]
    declared = parse_manifests(manifest, "docs/triggers.md")
    assert declared["github.issues"].signature == MANIFESTS["github.issues"].signature


def test_the_scenario_of_the_guide_is_the_examples() -> None:
    [shown] = [block for block in blocks(GUIDE, "yaml") if block.startswith("scenario:")]
    name = shown.split("\n", 1)[0].removeprefix("scenario: ")
    written = (SCENARIOS / f"{name}.yaml").read_text(encoding="utf-8")
    assert shown == "".join(line for line in written.splitlines(keepends=True)
                            if not line.startswith("#"))

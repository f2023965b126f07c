"""A scenario follows its run when it continues as new (a Python flow's
``ctx.continue_as_new``): its expectations are about the last run of the chain, scripted
events reach whichever run of the chain waits for them, and the successors are not reported
as runs that triggers started. On SQLite and PostgreSQL."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest
from scenario_projects import ScenarioProject

FLOWS = """\
from tarry import App, Context

app = App()


@app.flow("rounds")
async def rounds(ctx: Context, vendor: str, round: int = 1) -> dict:
    reply = await ctx.wait_for_event("reply", "vendor.reply",
                                     match={"vendor": vendor, "round": str(round)},
                                     timeout="1d")
    if round < 3:
        await ctx.step("note", lambda: round)
        ctx.continue_as_new(vendor=vendor, round=round + 1)
    return {"rounds": round, "last": reply.status}
"""

MANIFESTS = """\
events:
  vendor.reply:
    correlate_on: [vendor, round]
"""

SCENARIO = """\
scenario: three-rounds
flow: rounds
inputs: { vendor: acme }
start: "2026-03-02T09:00:00Z"
events:
  - { after: 1h, type: vendor.reply, data: { vendor: acme, round: "1" } }
  - { after: 3h, type: vendor.reply, data: { vendor: acme, round: "2" } }
expect:
  status: succeeded
  exit: completed
  events: [delivered, delivered]
  runs: []
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ScenarioProject:
    monkeypatch.chdir(tmp_path)
    module = f"rounds_{uuid.uuid4().hex[:8]}"
    project = ScenarioProject(tmp_path)
    project.write(f"{module}.py", FLOWS)
    project.write("tarry.toml", f'[tarry]\ndatabase = "sqlite:///state/tarry.db"\n'
                                f'app = "{module}:app"\n')
    project.write("events.yaml", MANIFESTS)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return project


async def test_a_scenario_follows_its_run_through_continue_as_new(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text(SCENARIO, store_url=store_url)
    assert result.passed, result.mismatches
    assert result.document is not None
    assert result.document["inputs"] == {"vendor": "acme", "round": 3}
    assert result.document["result"] == {"rounds": 3, "last": "timeout"}
    assert result.document["continued_from"] is not None
    assert result.started == ()

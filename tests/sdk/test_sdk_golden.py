"""Golden recorded runs (tests/sdk/golden/*.json, see golden_cases.py) replay against the
current code with the very same outcome at every checkpoint, executing nothing."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from golden_cases import CASES, EXAMPLE, GOLDEN, dump, example_app, golden_path, observed, record

from tarry import App
from tarry.actions import ActionRegistry
from tarry.clock import from_iso
from tarry.engine.catalog import Program
from tarry.engine.executor import update_for
from tarry.engine.interpreter import Env
from tarry.engine.outcome import Done
from tarry.language.manifests import load_manifests

GOLDEN_FILES = sorted(GOLDEN.glob("*.json"))
CHECKPOINTS = [pytest.param(path, index, id=f"{path.stem}-{index}")
               for path in GOLDEN_FILES
               for index in range(len(json.loads(path.read_text())["checkpoints"]))]


def program_of(flow: str) -> Program:
    """The example flow as the engine runs it."""
    app: App = example_app().app
    return app.programs(load_manifests([EXAMPLE / "events.yaml"]))[flow]


def test_every_case_has_its_golden_file() -> None:
    assert sorted(golden_path(case) for case in CASES) == GOLDEN_FILES


@pytest.mark.parametrize(("path", "index"), CHECKPOINTS)
async def test_a_recorded_checkpoint_replays_to_the_same_outcome(
        path: Path, index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    golden = json.loads(path.read_text(encoding="utf-8"))
    checkpoint = golden["checkpoints"][index]
    services = example_app().services
    for name in services.__all__:
        monkeypatch.setattr(services, name, _must_not_run(name))

    async def checkpoint_now() -> None:
        raise AssertionError("a replay of recorded operations must not checkpoint")

    program = program_of(golden["flow"])
    state = copy.deepcopy(checkpoint["state"])
    now = from_iso(checkpoint["now"])
    env = Env(run_id=golden["run_id"], flow=program.definition, now=now,
              inputs=golden["inputs"], actions=ActionRegistry(), checkpoint=checkpoint_now,
              run_info={"id": golden["run_id"], "target": None,
                        "started_at": state["started_at"]})
    outcome = await program.advance(env, state)

    update = update_for(golden["run_id"], state, outcome, [], now,
                        result=outcome.binding if isinstance(outcome, Done) else None)
    assert observed(update) == checkpoint["observed"]
    assert state == checkpoint["state"], "the replay recorded something new"
    assert env.history == [], "the replay executed something"


def _must_not_run(name: str) -> Any:
    def refuse(*args: Any) -> None:
        raise AssertionError(f"a replay called the service {name}{args}")
    return refuse


async def test_the_recorder_still_records_what_the_golden_files_hold(tmp_path: Path) -> None:
    """Regeneration does not rot: recording the first case afresh gives its file's text."""
    case = CASES[0]
    assert dump(await record(case, tmp_path)) == golden_path(case).read_text(encoding="utf-8")

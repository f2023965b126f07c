"""docs/holds.md: its flows load and run, its commands, configuration and check scripts do
what it says, and the messages, documents and tables it quotes are the ones tarry prints."""

from __future__ import annotations

import json
import logging
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hold_support import NoJitter, script

from markdown_blocks import TARRY, Document, add_config, fresh_project
from tarry.cli.holds import held_row, held_table
from tarry.cli.session import console
from tarry.config import load_settings
from tarry.errors import LoadError
from tarry.language.loader import parse_flow
from tarry.model import RunStatus
from tarry.testing import Harness

DOC = Document("docs/holds.md", __file__)
DEPLOY = DOC.block("yaml", after="## Declaring a hold")
HOTFIX = DOC.block("yaml", after="A single start can add an `after`")
HOLD_AFTER = DOC.block("sh", after="A single start can add an `after`")
CHECKS_TOML = DOC.block("toml", after="## `check`: a program you write")
CHECKS_ENV = DOC.block("sh", after="## `check`: a program you write")
PIPELINE_TRAP = DOC.block("sh", after="**The pipeline trap.**")
JIRA_CHECK = DOC.block("sh", after="Map every code yourself")
HTTP_CHECK = DOC.block("sh", after="- **An HTTP API**")
DENIED = DOC.block("", after="## Check slots across the fleet")
WAITING_FOR = DOC.block("json", after="## How a hold ends")
HELD = DOC.block("", after="## Watching, cancelling, diagnosing")
CHECK_ACTION = DOC.block("yaml", after="## The `check` action")
SEPT_1 = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)

pytestmark = pytest.mark.slow  # real check processes and commands

BODY = "steps:\n  - a: { log: x }\n"
MISTAKES = {
    "`hold: []`": "hold: []\n",
    "a fifth condition": "hold:\n" + "".join(f"  - check: {n}\n" for n in "abcde"),
    "two keys in one condition":
        'hold:\n  - { after: "2026-09-01T09:00:00Z", check: jira }\n',
    "an unknown key": "hold:\n  - wait: jira\n",
    "a near miss of `hold`": "holds:\n  - check: jira\n",
    "a zone-less `after`": 'hold:\n  - after: "2026-09-01T09:00:00"\n',
    "an impossible date": 'hold:\n  - after: "2026-02-31T09:00:00Z"\n',
    "two `after`s":
        'hold:\n  - after: "2026-09-01T09:00:00Z"\n  - after: "2026-09-02T09:00:00Z"\n',
    "the same check twice": "hold:\n  - check: jira\n  - check: jira\n",
}


@pytest.mark.parametrize(("mistake", "hold"), MISTAKES.items())
def test_each_quoted_load_message_is_the_loaders(mistake: str, hold: str) -> None:
    with pytest.raises(LoadError) as caught:
        parse_flow(f"flow: deploy\n{hold}{BODY}", "deploy.yaml")
    message = caught.value.problems[0].message
    assert f"| {mistake} | `{message}` |" in DOC.text


# --- declaring a hold, --hold-after -----------------------------------------------------------

def tarry(root: Path, *args: str, env: dict[str, str] | None = None,
          ) -> subprocess.CompletedProcess[str]:
    """``tarry ARGS`` in ``root``."""
    return subprocess.run([str(TARRY), *args], cwd=root, env=env or dict(os.environ),
                          capture_output=True, text=True, timeout=60, check=False)


def project(root: Path, flow: str, config: str = "", name: str = "deploy") -> Path:
    """A new project (``tarry init``) in ``root`` with ``flow`` as ``flows/<name>.yaml`` and
    the lines of ``config`` added to its tarry.toml."""
    fresh_project(root)
    (root / "flows" / f"{name}.yaml").write_text(flow, encoding="utf-8")
    add_config(root, config)
    return root


def shell(root: Path, command: str, env: dict[str, str] | None = None,
          ) -> subprocess.CompletedProcess[str]:
    """``command`` run by sh in ``root``, with ``tarry`` on the PATH."""
    environment = {**os.environ, **(env or {})}
    environment["PATH"] = f"{TARRY.parent}{os.pathsep}{environment['PATH']}"
    return subprocess.run(["sh", "-c", command], cwd=root, env=environment,
                          capture_output=True, text=True, timeout=60, check=False)


def test_the_deploy_flow_is_held_until_its_ticket_says_go(tmp_path: Path) -> None:
    go = script(tmp_path / "checks", "ticket.sh", "exit 0")
    root = project(tmp_path / "p", DEPLOY, f'[checks]\nticket = "{go}"\n')
    started = tarry(root, "start", "deploy", "--target", "acme/web#7", "-i", "release=v2.4.0")
    assert started.returncode == 0, started.stderr
    assert tarry(root, "worker", "--once").returncode == 0
    shown = json.loads(tarry(root, "show", started.stdout.strip(), "--json").stdout)
    assert (shown["status"], shown["bindings"]["deploy"]) == (
        "succeeded", {"message": "deploying v2.4.0 to acme/web#7"})


@pytest.mark.parametrize("line", [0, 1], ids=["start", "run"])
def test_a_start_adds_an_after_of_its_own(tmp_path: Path, line: int) -> None:
    root = project(tmp_path / "p", HOTFIX, name="hotfix")
    result = shell(root, HOLD_AFTER.splitlines()[line])
    assert result.returncode == 0, result.stderr
    run_id = result.stdout.split()[0 if line == 0 else 1]
    shown = json.loads(tarry(root, "show", run_id, "--json").stdout)
    assert shown["target"] == "acme/web#7"
    assert shown["status"] == ("held" if line == 0 else "succeeded")


def test_a_flow_with_an_after_takes_no_second_one_and_nothing_is_created(
        tmp_path: Path) -> None:
    root = project(tmp_path / "p", DEPLOY)
    result = shell(root, HOLD_AFTER.splitlines()[0].replace("hotfix", "deploy"))
    assert (result.returncode, result.stderr) == (1, (
        "error: flow 'deploy' already holds its runs until 2026-09-01T09:00:00.000Z; a hold "
        "has at most one 'after', so --hold-after cannot add another\n"))
    assert tarry(root, "runs").stderr == "no runs\n"


# --- declaring checks -------------------------------------------------------------------------

def test_the_checks_table_and_the_variable_declare_the_same_checks(tmp_path: Path) -> None:
    from_file = project(tmp_path / "file", DEPLOY, CHECKS_TOML)
    from_env = project(tmp_path / "env", DEPLOY)
    declared = {"ticket": Path("/opt/checks/ticket-done.sh"),
                "ci": Path("/opt/checks/ci-green.sh")}
    assert dict(load_settings(from_file, env={}).checks) == declared
    said = [[line for line in result.stdout.splitlines() if line.startswith("error: check")]
            for result in (shell(from_env, f"{CHECKS_ENV}tarry doctor"),
                           tarry(from_file, "doctor"))]
    assert said[0] == said[1] == [f"error: check '{name}': {path} does not exist"
                                  for name, path in sorted(declared.items())]


# --- writing a check --------------------------------------------------------------------------

@pytest.fixture
def fakes(tmp_path: Path) -> Path:
    """A folder of stand-ins for a tracker's command line (``jira``) and ``curl``, put first
    on the PATH of the scripts: ``jira`` prints ``answer.txt`` (or fails when it is missing),
    ``curl`` writes ``body.txt`` to its ``-o`` file and prints ``code.txt``."""
    folder = tmp_path / "bin"
    script(folder, "jira", f'echo "$*" >> {folder}/calls\n'
                           f'cat {folder}/answer.txt 2>/dev/null || exit 1')
    script(folder, "curl", f'echo "$*" >> {folder}/calls\n[ -f {folder}/code.txt ] || exit 6\n'
                           'while [ "$1" != "-o" ]; do shift; done\n'
                           f'cp {folder}/body.txt "$2"; cat {folder}/code.txt')
    return folder


def answer(fakes: Path, check: str, **files: str) -> int:
    """The exit code of the check ``check`` (a script's text) for target ``acme/web#7``,
    with the fakes answering ``files``."""
    for name in ("answer.txt", "body.txt", "code.txt"):
        (fakes / name).unlink(missing_ok=True)
    for name, text in files.items():
        (fakes / f"{name}.txt").write_text(text, encoding="utf-8")
    path = script(fakes.parent / "checks", "check.sh", check)
    env = {"PATH": f"{fakes}{os.pathsep}/usr/bin:/bin"}
    return subprocess.run([str(path), "acme/web#7"], env=env, capture_output=True,
                          timeout=30, check=False).returncode


def test_the_pipeline_trap_answers_could_not_tell_for_not_yet(fakes: Path) -> None:
    assert answer(fakes, PIPELINE_TRAP, answer="Status: Done\n") == 0
    assert answer(fakes, PIPELINE_TRAP, answer="Status: In Review\n") == 1


def test_the_jira_check_maps_every_answer_to_its_code(fakes: Path) -> None:
    check = JIRA_CHECK.removeprefix("#!/bin/sh\n")
    assert answer(fakes, check, answer="Status: Done\n") == 0
    assert answer(fakes, check, answer="Status: Won't Do\n") == 2
    assert answer(fakes, check, answer="Status: In Review\n") == 3
    assert answer(fakes, check) == 1
    assert (fakes / "calls").read_text(encoding="utf-8").splitlines()[0] == (
        "issue view PROJ-7 --plain")


def test_the_http_check_tells_a_transport_failure_from_an_answer(fakes: Path) -> None:
    assert answer(fakes, HTTP_CHECK, code="200", body='{"state":"done"}') == 0
    assert answer(fakes, HTTP_CHECK, code="200", body='{"state":"cancelled"}') == 2
    assert answer(fakes, HTTP_CHECK, code="200", body='{"state":"open"}') == 3
    assert answer(fakes, HTTP_CHECK, code="502", body="bad gateway") == 1
    assert answer(fakes, HTTP_CHECK) == 1
    assert (fakes / "calls").read_text(encoding="utf-8").splitlines()[0].endswith(
        "https://tracker.example/api/7")


# --- cadence, slots, what a held run says -----------------------------------------------------

def harness_with(tmp_path: Path, start: datetime, **checks: str) -> Harness:
    """A harness at ``start`` whose checks are the given ``name=shell body`` scripts."""
    paths = {name: script(tmp_path / "checks", f"{name}.sh", body)
             for name, body in checks.items()}
    harness = Harness(tmp_path / "h", start=start, checks=paths)
    harness.engine.holds.rng = NoJitter()
    return harness


async def test_a_run_denied_a_slot_four_times_logs_the_line_shown(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    harness = harness_with(tmp_path, SEPT_1, ticket="exit 0")
    harness.engine.store.acquire_check_slot("elsewhere", SEPT_1, SEPT_1 + timedelta(hours=1), 1)
    run_id = harness.start(harness.flow(DEPLOY), {"release": "v1"})
    caplog.set_level(logging.WARNING, "tarry.holds")
    for wake in range(4):
        await harness.run_until(SEPT_1 + wake * timedelta(seconds=15))
    harness.close()
    assert [record.getMessage() for record in caplog.records] == [
        DENIED.strip().replace("<id>", run_id)]


async def test_a_held_runs_waiting_for_is_the_document_shown(tmp_path: Path) -> None:
    harness = harness_with(tmp_path, SEPT_1, ticket="exit 3")
    run_id = harness.start(harness.flow(DEPLOY), {"release": "v1"})
    await harness.run_until(SEPT_1 + timedelta(minutes=3))
    document = harness.document(run_id)
    harness.close()
    assert {"waiting_for": document["waiting_for"]} == json.loads(f"{{{WAITING_FOR}}}")


HELD_FLOW = """\
flow: deploy
hold:
  - check: ticket
  - check: ci
steps:
  - deploy: { log: "deploying {{ run.target }}" }
"""


async def test_tarry_held_lays_out_the_rows_shown(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # laid out as for a pipe, wide
    harness = harness_with(tmp_path, SEPT_1 - timedelta(hours=2), ci="exit 3",
                           ticket='[ "$1" = "acme/web#31" ] && exit 0; exit 3')
    flow = harness.flow(HELD_FLOW)
    harness.start(flow, target="acme/web#3")
    await harness.advance(timedelta(minutes=1))
    harness.start(flow, target="acme/web#7", hold_after=SEPT_1 + timedelta(days=1))
    await harness.advance(timedelta(hours=2, minutes=14) - timedelta(minutes=41 + 1))
    harness.start(flow, target="acme/web#31")
    await harness.advance(timedelta(minutes=41 - 8))
    harness.start(flow, target="acme/api#5")
    await harness.advance(timedelta(minutes=8))
    now = harness.clock.now()
    records = harness.engine.store.list_runs(status=RunStatus.HELD, limit=3)
    rows = [held_row(record, now) for record in records]
    harness.close()
    out = console()
    with out.capture() as captured:
        out.print(held_table(rows))
    shown = HELD.splitlines()
    assert shown[0] == "$ tarry held"
    assert [line.rstrip() for line in captured.get().splitlines()] == shown[1:-1]
    assert shown[-1] == "and 1 more (tarry held --all)"


# --- the check action -------------------------------------------------------------------------

async def test_the_check_action_polls_until_the_check_says_go(tmp_path: Path) -> None:
    harness = harness_with(tmp_path, SEPT_1,
                           ticket=f'n=$(cat {tmp_path}/n 2>/dev/null || echo 0)\n'
                                  f'echo $((n + 1)) > {tmp_path}/n\n[ "$n" -ge 2 ] || exit 3')
    run_id = harness.start(harness.flow(CHECK_ACTION))
    await harness.run_until_idle()
    polls = harness.document(run_id)["bindings"]["ticket"]
    harness.close()
    assert [poll["asked"] for poll in polls] == [
        {"status": "not_yet", "exit": 3}, {"status": "not_yet", "exit": 3},
        {"status": "go", "exit": 0}]

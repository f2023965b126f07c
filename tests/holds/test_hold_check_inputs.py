"""What a check script receives besides its exit-code contract: a scrubbed environment (no
``TARRY_*`` secret, no database URL; only the base variables and ``[limits] check_env``), and
a target it cannot misread (an empty one or one that looks like an option is refused at start).

Real executables, the real engine on both stores, a virtual clock.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hold_support import T0, script

from markdown_blocks import TARRY, Document, add_config, fresh_project
from tarry.config import Limits, load_settings
from tarry.errors import ConfigError, InvalidRunRequest
from tarry.holds.checks import CheckRunner, check_environment
from tarry.model import RunStatus
from tarry.testing import Harness

pytestmark = pytest.mark.slow  # real check processes

ENVIRON = {"PATH": "/usr/bin:/bin", "HOME": "/home/ops", "TARRY_API_TOKEN": "tok-single",
           "TARRY_DATABASE": "postgresql://ada:db-pass@db/tarry", "JIRA_TOKEN": "jira",
           "DATABASE_URL": "postgresql://ada:db-pass@db/app"}
DOC = Document("docs/holds.md", __file__)
TARGET_REFUSALS = DOC.block("text", after="**The argument is always a target")
CHECK_ENV = DOC.block("toml", after="**A scrubbed environment.**")
HELD = "flow: deploy\nhold:\n  - check: probe\nsteps:\n  - go: { log: started }\n"


def test_a_check_environment_holds_the_base_variables_and_the_allowed_ones_only() -> None:
    assert check_environment(ENVIRON, ["JIRA_TOKEN", "NOT_SET"]) == {
        "PATH": "/usr/bin:/bin", "HOME": "/home/ops", "JIRA_TOKEN": "jira"}


async def test_a_check_script_sees_no_secret_of_the_worker(tmp_path: Path) -> None:
    seen = tmp_path / "env.txt"
    check = script(tmp_path, "check.sh",
                   f'printf "%s|%s|%s|%s" "${{TARRY_API_TOKEN-unset}}" '
                   f'"${{TARRY_DATABASE-unset}}" "${{DATABASE_URL-unset}}" '
                   f'"${{JIRA_TOKEN-unset}}" > "{seen}"')
    runner = CheckRunner(timeout=timedelta(seconds=5),
                         environment=check_environment(ENVIRON, ["JIRA_TOKEN"]))
    await runner.run("probe", check, "acme/web#7")
    assert seen.read_text() == "unset|unset|unset|jira"


@pytest.fixture
def harness(tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[Harness]:
    monkeypatch.setenv("TARRY_API_TOKEN", "tok-single")
    monkeypatch.setenv("JIRA_TOKEN", "jira")
    seen = tmp_path / "seen.txt"
    probe = script(tmp_path / "checks", "probe.sh",
                   f'printf "%s|%s|%s" "$#" "$1" "${{TARRY_API_TOKEN-unset}}'
                   f'${{JIRA_TOKEN-unset}}" > "{seen}"; exit 0')
    h = Harness(tmp_path / "project", start=T0, store_url=store_url, checks={"probe": probe},
                limits=Limits(check_env=("JIRA_TOKEN",)))
    yield h
    h.close()


async def test_a_held_run_checks_with_its_target_and_the_allowed_variables_only(
        harness: Harness, tmp_path: Path) -> None:
    run_id = harness.start(harness.flow(HELD), target="acme/web#7")
    await harness.run_until_idle()
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    assert (tmp_path / "seen.txt").read_text() == "1|acme/web#7|unsetjira"


@pytest.mark.parametrize(("target", "message"), [
    ("", "a run's target must not be empty; leave the target out for a run without one"),
    ("--help", "a run's target must not begin with '-' (a check script would read it as an "
               "option): '--help'"),
    ("-x", "a run's target must not begin with '-' (a check script would read it as an "
           "option): '-x'"),
])
def test_a_target_a_check_could_misread_is_refused_at_start(
        harness: Harness, target: str, message: str) -> None:
    with pytest.raises(InvalidRunRequest) as refused:
        harness.start(harness.flow(HELD), target=target)
    assert str(refused.value) == message
    assert harness.engine.runs() == []


def test_tarry_start_refuses_such_targets_with_the_messages_quoted(tmp_path: Path) -> None:
    root = fresh_project(tmp_path / "p")
    (root / "flows" / "deploy.yaml").write_text(HELD, encoding="utf-8")
    said = [subprocess.run([str(TARRY), "start", "deploy", "--target", target], cwd=root,
                           capture_output=True, text=True, timeout=60, check=False)
            for target in ("", "--help")]
    assert [result.returncode for result in said] == [1, 1]
    assert "".join(result.stderr for result in said) == TARGET_REFUSALS
    listed = subprocess.run([str(TARRY), "runs"], cwd=root, capture_output=True,
                            text=True, timeout=60, check=False)
    assert listed.stderr == "no runs\n"


def test_the_documented_check_env_setting_loads(tmp_path: Path) -> None:
    root = fresh_project(tmp_path / "p")
    add_config(root, CHECK_ENV)
    limits = load_settings(cwd=root, env={}).limits
    assert limits.check_env == ("JIRA_API_TOKEN", "HTTPS_PROXY")


@pytest.mark.parametrize(("env", "message"), [
    ({"TARRY_CHECK_ENV": "JIRA_TOKEN,TARRY_API_TOKEN"},
     "TARRY_CHECK_ENV: a check never receives tarry's own variables (\"TARRY_API_TOKEN\"); "
     "they hold the database URL and the API tokens"),
    ({"TARRY_CHECK_ENV": "NOT A NAME"},
     'TARRY_CHECK_ENV: "NOT A NAME" is not an environment variable name'),
])
def test_check_env_refuses_tarrys_own_variables_and_non_names(
        tmp_path: Path, env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(cwd=tmp_path, env=env)
    assert str(refused.value) == message

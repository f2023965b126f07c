"""`tarry init`'s scaffold: what it writes, what it refuses, and that the files are valid."""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tarry.config import load_settings
from tarry.errors import ConfigError
from tarry.language.loader import parse_flow
from tarry.language.manifests import parse_manifests
from tarry.scaffold import project_files, write_project
from tarry.testing import Harness

PROJECT = ("tarry.toml", "flows/hello.yaml", "events.yaml", ".gitignore")


def test_writes_the_project_into_a_new_folder_and_returns_every_file(tmp_path: Path) -> None:
    dest = tmp_path / "new" / "project"
    written = write_project(dest)
    assert written == [dest / name for name in PROJECT]
    texts = project_files()
    assert {name: (dest / name).read_text(encoding="utf-8") for name in PROJECT} == texts


def test_the_gitignore_ignores_the_local_state_folder(tmp_path: Path) -> None:
    write_project(tmp_path)
    assert ".tarry/" in (tmp_path / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_the_scaffolded_config_states_exactly_the_defaults(tmp_path: Path) -> None:
    write_project(tmp_path)
    scaffolded = load_settings(cwd=tmp_path, env={})
    (tmp_path / "tarry.toml").unlink()
    defaults = load_settings(cwd=tmp_path, env={})
    assert scaffolded == replace(defaults, config_file=tmp_path.resolve() / "tarry.toml")


def uncommented_config() -> str:
    """The scaffolded tarry.toml with every commented-out example line switched on."""
    return re.sub(r"^# (?=\"?[\w.]+\"? = )", "", project_files()["tarry.toml"], flags=re.M)


def test_the_scaffolded_config_shows_every_key() -> None:
    document = tomllib.loads(uncommented_config())
    assert {table: set(keys) for table, keys in document.items()} == {
        "tarry": {"database", "flows", "events", "app", "provided_actions"},
        "actions": {"slack.post"},
        "checks": {"jira"},
        "limits": {"action_timeout", "hold_max", "hold_after_max", "check_interval",
                   "check_timeout", "check_max", "check_faults", "check_slots"},
    }


def test_the_commented_examples_are_valid_when_switched_on(tmp_path: Path) -> None:
    (tmp_path / "tarry.toml").write_text(uncommented_config(), encoding="utf-8")
    settings = load_settings(cwd=tmp_path, env={})
    assert settings.app == "myproject.flows:app"
    assert dict(settings.actions) == {"slack.post": "myproject.slack:post"}
    assert settings.provided_actions == {"billing.charge"}
    assert dict(settings.checks) == {"jira": Path("/opt/checks/wait-jira.sh")}


def test_refuses_a_folder_that_holds_a_project_file_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "hello.yaml").write_text("mine", encoding="utf-8")
    (tmp_path / "events.yaml").write_text("mine", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        write_project(tmp_path)
    assert str(refused.value) == (f"{tmp_path} already holds flows/hello.yaml, events.yaml; "
                                  "tarry init never overwrites files: move them away or "
                                  "choose another folder")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["events.yaml", "flows", "hello.yaml"]
    assert (tmp_path / "events.yaml").read_text(encoding="utf-8") == "mine"


def test_refuses_a_destination_that_is_a_file(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        write_project(target)
    assert str(refused.value) == (f"{target} exists and is not a folder; "
                                  "choose a folder for the project")


@pytest.mark.parametrize("existing", ["node_modules/", "node_modules/\n"])
def test_an_existing_gitignore_is_kept_and_gets_the_state_folder(
        tmp_path: Path, existing: str) -> None:
    (tmp_path / ".gitignore").write_text(existing, encoding="utf-8")
    assert tmp_path / ".gitignore" in write_project(tmp_path)
    assert (tmp_path / ".gitignore").read_text(encoding="utf-8") == (
        "node_modules/\n" + project_files()[".gitignore"])


def test_a_gitignore_that_already_ignores_the_state_folder_is_left_alone(
        tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.pyc\n/.tarry\n", encoding="utf-8")
    assert tmp_path / ".gitignore" not in write_project(tmp_path)
    assert (tmp_path / ".gitignore").read_text(encoding="utf-8") == "*.pyc\n/.tarry\n"


def scaffolded_flows() -> list[tuple[str, str]]:
    """Every (path, text) of a flow the scaffold writes."""
    return [(name, text) for name, text in project_files().items() if name.startswith("flows/")]


@pytest.mark.parametrize(("name", "text"), scaffolded_flows())
def test_every_scaffolded_flow_loads(name: str, text: str) -> None:
    assert parse_flow(text, name).name == Path(name).stem


def test_the_scaffolded_manifest_loads() -> None:
    manifests = parse_manifests(project_files()["events.yaml"], "events.yaml")
    reply = manifests["hello.reply"]
    assert (reply.correlate_on, reply.buffer) == (("name",), timedelta(minutes=5))
    assert reply.problems({"name": "Ada", "text": "Hi!"}) == []


async def test_the_hello_flow_runs_to_its_exit_after_its_wait(tmp_path: Path) -> None:
    harness = Harness(tmp_path, start=datetime(2026, 1, 1, tzinfo=UTC))
    try:
        flow = harness.flow(project_files()["flows/hello.yaml"], "flows/hello.yaml")
        run_id = harness.start(flow, {"name": "Ada"})
        await harness.run_until_idle()
        document = harness.document(run_id)
    finally:
        harness.close()
    assert (document["status"], document["exit"]) == ("succeeded", "greeted")
    assert document["bindings"]["greeting"] == {"text": "Hello, Ada",
                                                "waited_until": "2026-01-01T00:00:02.000Z"}

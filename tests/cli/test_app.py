"""The command line as a whole: exit codes, error lines, --debug."""

from __future__ import annotations

import errno

import pytest

import tarry.cli
from tarry.cli import render
from tarry.cli.app import error_lines
from tarry.cli.session import console
from tarry.errors import ConfigError, LoadError, Problem, RunNotFound

from .conftest import Project


def test_no_command_shows_the_help_as_a_usage_error(project: Project) -> None:
    result = project.tarry()
    assert result.exit_code == 2
    assert "Commands:" in result.output


def test_help_lists_every_command(project: Project) -> None:
    result = project.tarry("--help")
    assert result.exit_code == 0
    for command in ("init", "validate", "run", "start", "worker", "runs", "show", "cancel",
                    "migrate"):
        assert f"\n  {command} " in result.stdout


@pytest.mark.parametrize("args", [["nonsense"], ["runs", "--bogus"], ["show"],
                                  ["runs", "--limit", "0"], ["worker", "--concurrency", "x"]])
def test_usage_errors_exit_2(project: Project, args: list[str]) -> None:
    result = project.tarry(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr


def test_a_tarry_error_is_one_line_on_stderr_without_traceback(project: Project) -> None:
    assert project.tarry("migrate").exit_code == 0
    result = project.tarry("show", "nope")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == "error: no run with id 'nope'\n"


def test_debug_adds_the_traceback(project: Project) -> None:
    assert project.tarry("migrate").exit_code == 0
    result = project.tarry("--debug", "show", "nope")
    assert result.exit_code == 1
    assert result.stderr.startswith("Traceback (most recent call last):\n")
    assert "tarry.errors.RunNotFound: no run with id 'nope'\n" in result.stderr
    assert result.stderr.endswith("\nerror: no run with id 'nope'\n")


def test_a_broken_config_is_reported_as_an_error(project: Project) -> None:
    (project.root / "tarry.toml").write_text("[tarry]\nflow = 'x'\n", encoding="utf-8")
    result = project.tarry("runs")
    assert result.exit_code == 1
    assert result.stderr == (f"error: {project.root / 'tarry.toml'}: [tarry] unknown key "
                             "'flow' (did you mean 'flows'?)\n")


def test_a_bug_is_not_disguised_as_an_error_line(project: Project,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object) -> None:
        raise ZeroDivisionError("oops")
    monkeypatch.setattr(render, "show_run", broken)
    project.flow("cooling", "flow: cooling\nsteps:\n  - a: { set: { x: 1 } }\n")
    run_id = project.tarry("start", "cooling").stdout.strip()
    result = project.tarry("show", run_id)
    assert isinstance(result.exception, ZeroDivisionError)


def test_a_load_error_prints_each_problem_on_its_own_line() -> None:
    error = LoadError([Problem("f.yaml", 3, 7, "unknown key 'wiat'"),
                       Problem("f.yaml", 9, 1, "missing 'steps'")])
    assert error_lines(error) == ["f.yaml:3:7: unknown key 'wiat'", "f.yaml:9:1: missing 'steps'"]


def test_other_errors_are_one_line() -> None:
    assert error_lines(RunNotFound("x")) == ["error: no run with id 'x'"]
    assert error_lines(PermissionError(errno.EACCES, "Permission denied", "/srv/p")) == [
        "error: /srv/p: Permission denied"]


def test_several_configuration_mistakes_are_one_line_each() -> None:
    error = ConfigError("tarry.toml: [actions] a: bad", "tarry.toml: [actions] b: bad")
    assert error_lines(error) == ["error: tarry.toml: [actions] a: bad",
                                  "error: tarry.toml: [actions] b: bad"]
    assert error_lines(ConfigError("one")) == ["error: one"]


def test_output_to_a_pipe_is_wide_unless_columns_say_otherwise(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert console().width == 200
    monkeypatch.setenv("COLUMNS", "72")
    assert console().width == 72


def test_the_package_exports_the_app_and_main() -> None:
    assert tarry.cli.__all__ == ["app", "main"]

"""Project configuration: tarry.toml, TARRY_* overrides, defaults and every refusal."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from tarry.config import (
    CHECK_INTERVAL_FLOOR,
    CONFIG_FILE,
    Limits,
    Retention,
    Settings,
    load_settings,
    sqlite_path,
)
from tarry.errors import ConfigError


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A resolved project folder (messages and settings carry resolved paths)."""
    return tmp_path.resolve()


def write_config(folder: Path, text: str) -> Path:
    """Write ``tarry.toml`` into ``folder`` and return its path."""
    path = folder / CONFIG_FILE
    path.write_text(text, encoding="utf-8")
    return path


def load(root: Path, text: str | None = None, **env: str) -> Settings:
    """Load settings from ``root`` after writing ``text`` (when given) as its tarry.toml."""
    if text is not None:
        write_config(root, text)
    return load_settings(cwd=root, env=env)


# --- defaults and discovery ---------------------------------------------------------------------

def test_without_a_file_the_working_directory_is_the_root_and_defaults_apply(root: Path) -> None:
    settings = load(root)
    assert settings == Settings(
        root=root,
        config_file=None,
        database=f"sqlite:///{root}/.tarry/tarry.db",
        flows_dir=root / "flows",
        event_files=(root / "events.yaml",),
        app=None,
        actions={},
        checks={},
        limits=Limits(),
        api_token=None,
    )


def test_default_limits_are_the_documented_ones() -> None:
    assert Limits() == Limits(
        hold_max=timedelta(hours=24),
        hold_after_max=timedelta(days=30),
        check_interval=timedelta(seconds=60),
        check_timeout=timedelta(seconds=10),
        check_max=96,
        check_faults=5,
        check_slots=1,
        action_timeout=timedelta(minutes=5),
    )


def test_the_file_is_found_in_the_nearest_parent_which_becomes_the_root(root: Path) -> None:
    write_config(root, "")
    project = root / "project"
    nested = project / "flows" / "deep"
    nested.mkdir(parents=True)
    config = write_config(project, '[tarry]\nflows = "pipelines"\n')
    settings = load_settings(cwd=nested, env={})
    assert (settings.root, settings.config_file) == (project, config)
    assert settings.flows_dir == project / "pipelines"


def test_a_folder_named_like_the_config_file_is_not_the_config_file(root: Path) -> None:
    (root / CONFIG_FILE).mkdir()
    assert load(root).config_file is None


def test_an_empty_file_gives_the_defaults_with_its_folder_as_root(root: Path) -> None:
    defaults = load(root)
    assert load(root, "") == replace(defaults, config_file=root / CONFIG_FILE)


def test_defaults_to_the_working_directory_and_the_process_environment(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(root)
    monkeypatch.setenv("TARRY_FLOWS", "from-env")
    assert load_settings().flows_dir == root / "from-env"


# --- values from the file -----------------------------------------------------------------------

FULL_FILE = """
[tarry]
database = "sqlite:///state/db.sqlite"
flows = "pipelines"
events = ["events.yaml", "more/manifests.yaml", "/etc/tarry/shared.yaml"]
app = "myproject.flows:app"

[actions]
"slack.post" = "myproject.slack:post"
notify = "myproject.notify:send"

[checks]
jira = "/opt/checks/wait-jira.sh"

[limits]
hold_max = "2d"
hold_after_max = "P7D"
check_interval = "2m"
check_timeout = "1m30s"
check_max = 10
check_faults = 3
check_slots = 4
action_timeout = "90s"
"""


def test_every_key_of_the_file_is_read_and_paths_are_resolved_against_the_root(
        root: Path) -> None:
    settings = load(root, FULL_FILE)
    assert settings.database == f"sqlite:///{root}/state/db.sqlite"
    assert settings.sqlite_path == root / "state" / "db.sqlite"
    assert settings.flows_dir == root / "pipelines"
    assert settings.event_files == (root / "events.yaml", root / "more" / "manifests.yaml",
                                    Path("/etc/tarry/shared.yaml"))
    assert settings.app == "myproject.flows:app"
    assert dict(settings.actions) == {"slack.post": "myproject.slack:post",
                                      "notify": "myproject.notify:send"}
    assert dict(settings.checks) == {"jira": Path("/opt/checks/wait-jira.sh")}
    assert settings.limits == Limits(
        hold_max=timedelta(days=2), hold_after_max=timedelta(days=7),
        check_interval=timedelta(minutes=2), check_timeout=timedelta(seconds=90),
        check_max=10, check_faults=3, check_slots=4, action_timeout=timedelta(seconds=90))


@pytest.mark.parametrize(("url", "expected"), [
    ("sqlite:////var/lib/tarry.db", "sqlite:////var/lib/tarry.db"),
    ("sqlite:///:memory:", "sqlite:///:memory:"),
    ("postgresql://tarry@db:5432/tarry", "postgresql://tarry@db:5432/tarry"),
    ("postgres://db/tarry", "postgres://db/tarry"),
])
def test_absolute_memory_and_postgresql_urls_are_kept_as_written(
        root: Path, url: str, expected: str) -> None:
    assert load(root, f'[tarry]\ndatabase = "{url}"\n').database == expected


def test_sqlite_path_reads_the_file_of_a_sqlite_url_only() -> None:
    assert sqlite_path("sqlite:////var/lib/tarry.db") == Path("/var/lib/tarry.db")
    assert sqlite_path("sqlite:///rel/tarry.db") == Path("rel/tarry.db")
    assert sqlite_path("postgresql://db/tarry") is None


def test_an_empty_events_list_means_no_manifests(root: Path) -> None:
    assert load(root, "[tarry]\nevents = []\n").event_files == ()


def test_actions_and_checks_are_read_only(root: Path) -> None:
    settings = load(root, FULL_FILE)
    with pytest.raises(TypeError):
        settings.actions["x"] = "m:f"  # type: ignore[index]
    with pytest.raises(TypeError):
        settings.checks["x"] = Path("/x")  # type: ignore[index]


# --- check interval floor -----------------------------------------------------------------------

@pytest.mark.parametrize("interval", ["10s", "29s999ms", "1s"])
def test_a_check_interval_below_the_floor_is_raised_to_thirty_seconds(
        root: Path, interval: str) -> None:
    from_file = load(root, f'[limits]\ncheck_interval = "{interval}"\n')
    from_env = load(root, TARRY_CHECK_INTERVAL=interval)
    assert from_file.limits.check_interval == CHECK_INTERVAL_FLOOR == timedelta(seconds=30)
    assert from_env.limits.check_interval == CHECK_INTERVAL_FLOOR


def test_limits_built_directly_respect_the_floor_too() -> None:
    assert Limits(check_interval=timedelta(seconds=5)).check_interval == CHECK_INTERVAL_FLOOR
    assert Limits(check_interval=timedelta(seconds=31)).check_interval == timedelta(seconds=31)


# --- environment overrides ----------------------------------------------------------------------

@pytest.mark.parametrize(("variable", "value", "attribute", "expected"), [
    ("TARRY_DATABASE", "postgresql://pg/tarry", "database", "postgresql://pg/tarry"),
    ("TARRY_APP", "other.mod:application", "app", "other.mod:application"),
])
def test_an_environment_variable_wins_over_the_file(
        root: Path, variable: str, value: str, attribute: str, expected: object) -> None:
    settings = load(root, FULL_FILE, **{variable: value})
    assert getattr(settings, attribute) == expected


def test_path_variables_are_resolved_against_the_root(root: Path) -> None:
    settings = load(root, FULL_FILE, TARRY_FLOWS="elsewhere",
                    TARRY_EVENTS=" a.yaml, /abs/b.yaml ,,", TARRY_DATABASE="sqlite:///x.db")
    assert settings.flows_dir == root / "elsewhere"
    assert settings.event_files == (root / "a.yaml", Path("/abs/b.yaml"))
    assert settings.database == f"sqlite:///{root}/x.db"


@pytest.mark.parametrize(("variable", "value", "field", "expected"), [
    ("TARRY_HOLD_MAX", "36h", "hold_max", timedelta(hours=36)),
    ("TARRY_HOLD_AFTER_MAX", "PT1H", "hold_after_max", timedelta(hours=1)),
    ("TARRY_CHECK_INTERVAL", "5m", "check_interval", timedelta(minutes=5)),
    ("TARRY_CHECK_TIMEOUT", "500ms", "check_timeout", timedelta(milliseconds=500)),
    ("TARRY_CHECK_MAX", "7", "check_max", 7),
    ("TARRY_CHECK_FAULTS", " 2 ", "check_faults", 2),
    ("TARRY_CHECK_SLOTS", "16", "check_slots", 16),
    ("TARRY_SHOWN_BYTES", "256", "shown_bytes", 256),
    ("TARRY_ACTION_TIMEOUT", "2h", "action_timeout", timedelta(hours=2)),
])
def test_every_limit_has_a_variable_that_wins_over_the_file(
        root: Path, variable: str, value: str, field: str, expected: object) -> None:
    assert getattr(load(root, FULL_FILE, **{variable: value}).limits, field) == expected


def test_retention_is_off_by_default(root: Path) -> None:
    assert load(root).retention == Retention(runs=None, events=None)
    assert not load(root).retention.on


def test_retention_is_read_from_its_table_and_its_variables_win(root: Path) -> None:
    text = '[tarry]\nevents = ["e.yaml"]\n[retention]\nruns = "30d"\nevents = "7d"\n'
    settings = load(root, text)
    assert settings.retention == Retention(runs=timedelta(days=30), events=timedelta(days=7))
    assert settings.event_files == (root / "e.yaml",)  # [tarry] events is another key
    assert load(root, text, TARRY_RETENTION_RUNS="1d", TARRY_RETENTION_EVENTS="36h"
                ).retention == Retention(runs=timedelta(days=1), events=timedelta(hours=36))
    assert load(root, TARRY_RETENTION_EVENTS="2d").retention.on


def test_empty_variables_count_as_unset(root: Path) -> None:
    settings = load(root, FULL_FILE, TARRY_APP="", TARRY_HOLD_MAX=" ", TARRY_CHECKS="",
                    TARRY_API_TOKEN="")
    assert settings == load(root)


def test_tarry_checks_adds_to_the_file_and_wins_on_the_same_name(root: Path) -> None:
    settings = load(root, FULL_FILE,
                    TARRY_CHECKS="jira:/srv/jira-check, deploy : /srv/deploy-window ,")
    assert dict(settings.checks) == {"jira": Path("/srv/jira-check"),
                                     "deploy": Path("/srv/deploy-window")}


def test_tarry_checks_splits_each_entry_on_its_first_colon(root: Path) -> None:
    settings = load(root, TARRY_CHECKS="odd:/opt/checks/a:b.sh")
    assert dict(settings.checks) == {"odd": Path("/opt/checks/a:b.sh")}


def test_the_api_token_comes_from_the_environment_only_and_is_not_shown(root: Path) -> None:
    settings = load(root, TARRY_API_TOKEN="s3cret")
    assert settings.api_token == "s3cret"
    assert "s3cret" not in repr(settings)


# --- refusals -----------------------------------------------------------------------------------

DURATION_HELP = "(use e.g. 500ms, 30s, 15m, 24h, 2d, 1w, 1h30m or ISO 8601 like PT30S)"


@pytest.mark.parametrize(("text", "message"), [
    ("[limit]\nhold_max = \"1h\"\n",
     "unknown table [limit] (did you mean 'limits'?)"),
    ("[server]\nport = 1\n",
     "unknown table [server]"),
    ("database = \"sqlite:///x.db\"\n",
     "'database' must be written inside the [tarry] table"),
    ("tarry = 1\n",
     "'tarry' must be a table ([tarry]), got 1 (an integer)"),
    ("[tarry]\ndatabse = \"sqlite:///x.db\"\n",
     "[tarry] unknown key 'databse' (did you mean 'database'?)"),
    ("[tarry]\napi_token = \"s3cret\"\n",
     "[tarry] unknown key 'api_token'"),
    ("[limits]\ncheck_intervall = \"1m\"\n",
     "[limits] unknown key 'check_intervall' (did you mean 'check_interval'?)"),
    ("[tarry]\ndatabase = 5\n",
     "[tarry] database: expected a non-empty string, got 5 (an integer)"),
    ("[tarry]\ndatabase = \"mysql://db/x\"\n",
     "[tarry] database: expected a sqlite:///path or postgresql:// URL, got \"mysql://db/x\""),
    ("[tarry]\nflows = \"  \"\n",
     "[tarry] flows: expected a non-empty string, got \"  \""),
    ("[tarry]\nevents = \"events.yaml\"\n",
     "[tarry] events: expected an array of file names such as [\"events.yaml\"], "
     "got \"events.yaml\""),
    ("[tarry]\nevents = [\"a.yaml\", 3]\n",
     "[tarry] events[1]: expected a non-empty string, got 3 (an integer)"),
    ("[tarry]\napp = \"myproject\"\n",
     "[tarry] app: expected \"module:attribute\" such as \"myproject.flows:app\", "
     "got \"myproject\""),
    ("[actions]\n\"slack.post\" = true\n",
     "[actions] slack.post: expected a non-empty string, got true (a boolean)"),
    ("[actions]\nnotify = \"notify.send\"\n",
     "[actions] notify: expected \"module:attribute\" such as \"myproject.flows:app\", "
     "got \"notify.send\""),
    ("[tarry]\nprovided_actions = \"billing.charge\"\n",
     "[tarry] provided_actions: expected an array of action names such as "
     "[\"billing.charge\"], got \"billing.charge\""),
    ("[tarry]\nprovided_actions = [\"billing.charge\", \"\"]\n",
     "[tarry] provided_actions[1]: expected a non-empty string, got \"\""),
    ("[tarry]\nprovided_action = [\"billing.charge\"]\n",
     "[tarry] unknown key 'provided_action' (did you mean 'provided_actions'?)"),
    ("[tarry]\nprovided_actions = [\"http.request\"]\n",
     "[tarry] provided_actions: 'http.request' is a built-in action; list only actions that "
     "no module here provides"),
    ("[tarry]\nprovided_actions = [\"notify\"]\n[actions]\nnotify = \"notify:send\"\n",
     "[tarry] provided_actions: 'notify' is also in [actions]; an action is imported through "
     "[actions] or provided elsewhere, not both"),
    ("[checks]\njira = \"checks/jira.sh\"\n",
     "[checks] jira: a check path must be absolute, got \"checks/jira.sh\""),
    ("[checks]\njira = [\"/bin/true\"]\n",
     "[checks] jira: expected a non-empty string, got [\"/bin/true\"] (an array)"),
    ("[limits]\nhold_max = \"3x\"\n",
     f"[limits] hold_max: '3x' is not a duration {DURATION_HELP}"),
    ("[limits]\nhold_after_max = \"1mo\"\n",
     "[limits] hold_after_max: duration '1mo' uses months or years, whose length is "
     "ambiguous; use days or weeks"),
    ("[limits]\ncheck_timeout = 10\n",
     "[limits] check_timeout: expected a duration string such as \"24h\", "
     "got 10 (an integer)"),
    ("[limits]\ncheck_interval = \"0s\"\n",
     "[limits] check_interval: expected a duration longer than zero, got \"0s\""),
    ("[limits]\naction_timeout = 300\n",
     "[limits] action_timeout: expected a duration string such as \"24h\", "
     "got 300 (an integer)"),
    ("[limits]\naction_timeout = \"0s\"\n",
     "[limits] action_timeout: expected a duration longer than zero, got \"0s\""),
    ("[limits]\naction_timout = \"1m\"\n",
     "[limits] unknown key 'action_timout' (did you mean 'action_timeout'?)"),
    ("[limits]\ncheck_max = \"96\"\n",
     "[limits] check_max: expected a positive integer, got \"96\""),
    ("[limits]\ncheck_faults = 0\n",
     "[limits] check_faults: expected a positive integer, got 0 (an integer)"),
    ("[limits]\ncheck_slots = true\n",
     "[limits] check_slots: expected a positive integer, got true (a boolean)"),
    ("[limits]\ncheck_max = 2.5\n",
     "[limits] check_max: expected a positive integer, got 2.5 (a float)"),
    ("[retention]\nruns = 30\n",
     "[retention] runs: expected a duration string such as \"24h\", got 30 (an integer)"),
    ("[retention]\nevents = \"0s\"\n",
     "[retention] events: expected a duration longer than zero, got \"0s\""),
    ("[retention]\nrun = \"30d\"\n", "[retention] unknown key 'run' (did you mean 'runs'?)"),
    ("[retention]\nruns = \"12h\"\n",
     "[retention] runs: keep at least a day (a start's Idempotency-Key and an event's id are "
     "remembered that long), got \"12h\""),
])
def test_a_bad_file_is_refused_naming_the_file_table_and_key(
        root: Path, text: str, message: str) -> None:
    path = write_config(root, text)
    with pytest.raises(ConfigError) as refused:
        load_settings(cwd=root, env={})
    assert str(refused.value) == f"{path}: {message}"


def test_every_malformed_entry_of_a_table_is_reported_at_once(root: Path) -> None:
    path = write_config(root, '[actions]\nnotify = "notify.send"\n"slack.post" = true\n'
                              'fine = "mod:fine"\n')
    with pytest.raises(ConfigError) as refused:
        load_settings(cwd=root, env={})
    assert refused.value.args == (
        f'{path}: [actions] notify: expected "module:attribute" such as '
        '"myproject.flows:app", got "notify.send"',
        f"{path}: [actions] slack.post: expected a non-empty string, got true (a boolean)")
    assert str(refused.value) == "\n".join(refused.value.args)


def test_actions_provided_elsewhere_come_from_the_file_or_the_variable(root: Path) -> None:
    text = '[tarry]\nprovided_actions = ["billing.charge", "slack.post"]\n'
    assert load(root, text).provided_actions == {"billing.charge", "slack.post"}
    assert load(root, text, TARRY_PROVIDED_ACTIONS="crm.sync, audit.write").provided_actions \
        == {"crm.sync", "audit.write"}
    with pytest.raises(ConfigError) as refused:
        load(root, TARRY_PROVIDED_ACTIONS="crm.sync,log")
    assert str(refused.value) == ("TARRY_PROVIDED_ACTIONS: 'log' is a built-in action; list "
                                  "only actions that no module here provides")


def test_a_toml_syntax_error_is_refused_with_its_line_and_column(root: Path) -> None:
    path = write_config(root, '[tarry]\nflows = "flows\n')
    with pytest.raises(ConfigError) as refused:
        load_settings(cwd=root, env={})
    assert str(refused.value) == (f"{path}: not valid TOML: Illegal character '\\n' "
                                  "(at line 2, column 15)")


def test_a_file_that_is_not_utf8_is_refused(root: Path) -> None:
    path = root / CONFIG_FILE
    path.write_bytes(b"[tarry]\nflows = \"\xff\"\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(cwd=root, env={})
    assert str(refused.value) == f"{path}: is not UTF-8 text (invalid start byte at byte 17)"


def test_a_file_that_cannot_be_read_is_refused(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config(root, "")

    def denied(self: Path, *args: object) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "open", denied)
    with pytest.raises(ConfigError) as refused:
        load_settings(cwd=root, env={})
    assert str(refused.value) == f"{path}: cannot be read (Permission denied)"


def test_a_file_over_the_file_limit_is_refused_unread(root: Path) -> None:
    path = write_config(root, "# " + "x" * 1_048_576 + "\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(cwd=root, env={})
    assert str(refused.value) == (f"{path}: the file is 1,048,579 bytes, over the limit of "
                                  "1,048,576 bytes ([limits] file_bytes)")


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("TARRY_DATABASE", "sqlite:/x.db",
     "TARRY_DATABASE: expected a sqlite:///path or postgresql:// URL, got \"sqlite:/x.db\""),
    ("TARRY_APP", "pkg.mod", "TARRY_APP: expected \"module:attribute\" such as "
     "\"myproject.flows:app\", got \"pkg.mod\""),
    ("TARRY_HOLD_MAX", "forever",
     f"TARRY_HOLD_MAX: 'forever' is not a duration {DURATION_HELP}"),
    ("TARRY_CHECK_TIMEOUT", "0ms",
     "TARRY_CHECK_TIMEOUT: expected a duration longer than zero, got \"0ms\""),
    ("TARRY_CHECK_MAX", "ten", "TARRY_CHECK_MAX: expected a positive integer, got \"ten\""),
    ("TARRY_ACTION_TIMEOUT", "5 minutes",
     f"TARRY_ACTION_TIMEOUT: '5 minutes' is not a duration {DURATION_HELP}"),
    ("TARRY_ACTION_TIMEOUT", "0ms",
     "TARRY_ACTION_TIMEOUT: expected a duration longer than zero, got \"0ms\""),
    ("TARRY_RETENTION_RUNS", "a month",
     f"TARRY_RETENTION_RUNS: 'a month' is not a duration {DURATION_HELP}"),
    ("TARRY_RETENTION_EVENTS", "23h",
     "TARRY_RETENTION_EVENTS: keep at least a day (a start's Idempotency-Key and an event's "
     "id are remembered that long), got \"23h\""),
    ("TARRY_CHECK_FAULTS", "-1", "TARRY_CHECK_FAULTS: expected a positive integer, got \"-1\""),
    ("TARRY_CHECK_SLOTS", "0", "TARRY_CHECK_SLOTS: expected a positive integer, got \"0\""),
    ("TARRY_CHECKS", "jira",
     "TARRY_CHECKS: entry \"jira\" is not name:/absolute/path"),
    ("TARRY_CHECKS", "a:/bin/true,:/bin/false",
     "TARRY_CHECKS: entry \":/bin/false\" is not name:/absolute/path"),
    ("TARRY_CHECKS", "jira: ",
     "TARRY_CHECKS: entry \"jira:\" is not name:/absolute/path"),
    ("TARRY_CHECKS", "jira:checks/jira.sh",
     "TARRY_CHECKS: jira: a check path must be absolute, got \"checks/jira.sh\""),
])
def test_a_bad_variable_is_refused_naming_the_variable(
        root: Path, variable: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load(root, **{variable: value})
    assert str(refused.value) == message


@pytest.mark.parametrize(("text", "message"), [
    ("[limits]\nhold_max = " + "[" * 3000 + "]" * 3000 + "\n",
     "not valid TOML: arrays or tables nested too deeply"),
    ("[limits]\ncheck_max = " + "9" * 5000 + "\n", "not valid TOML: a number is too long"),
])
def test_a_hostile_toml_file_is_a_config_error_not_a_crash(
        root: Path, text: str, message: str) -> None:
    path = write_config(root, text)
    with pytest.raises(ConfigError) as refused:
        load_settings(cwd=root, env={})
    assert str(refused.value) == f"{path}: {message}"

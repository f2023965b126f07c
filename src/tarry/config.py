"""Project configuration: ``tarry.toml`` overlaid with ``TARRY_*`` environment variables.

The project root is the folder holding ``tarry.toml``, found in the working directory or its
nearest parent; without a file the working directory is the root and every default applies.
Relative paths (flows folder, manifest files, a relative SQLite database) are resolved against
the root, whether they come from the file or from the environment. An environment variable
wins over the file. Every mistake is a :class:`~tarry.errors.ConfigError` whose message names
the file (or the variable), the table and the key, and says what was expected::

    [tarry]
    database = "sqlite:///.tarry/tarry.db"   # TARRY_DATABASE
    flows = "flows"                          # TARRY_FLOWS
    events = ["events.yaml"]                 # TARRY_EVENTS (comma-separated)
    app = "myproject.flows:app"              # TARRY_APP
    provided_actions = ["billing.charge"]    # TARRY_PROVIDED_ACTIONS (comma-separated)

    [actions]                                # name = "module:function"
    [checks]                                 # name = "/abs/path"; TARRY_CHECKS adds to these
    [limits]                                 # TARRY_HOLD_MAX, TARRY_EVENT_BYTES, ...
    [retention]                              # runs = "30d", events = "7d" (off by default)
    [calendars.NAME]                         # timezone, hours, holidays, holidays_file

The API token is read from ``TARRY_API_TOKEN`` only; it has no key in the file.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any
from zoneinfo import ZoneInfo, available_timezones

from tarry._suggest import did_you_mean
from tarry.errors import ConfigError, LoadError
from tarry.files import FILE_BYTES, read_source
from tarry.language.calendars import Calendar, parse_hours
from tarry.language.durations import parse_duration, parse_zone
from tarry.language.holidayfiles import read_holidays
from tarry.language.loader import BUILTIN_ACTIONS
from tarry.secrets import redact_database_url
from tarry.values import MIB, ValueLimits

__all__ = ["CHECK_BASE_ENV", "CHECK_INTERVAL_FLOOR", "CONFIG_FILE", "RETENTION_FLOOR", "Limits",
           "Retention", "Settings", "load_settings", "retention_duration", "sqlite_path"]

CONFIG_FILE = "tarry.toml"
"""The name of the project configuration file."""

CHECK_BASE_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TZ")
"""The variables every check script receives (when set): enough to run a shell script."""

CHECK_INTERVAL_FLOOR = timedelta(seconds=30)
"""The shortest base interval between two hold checks; a smaller setting is raised to it."""

RETENTION_FLOOR = timedelta(days=1)
"""The shortest retention: a start's ``Idempotency-Key`` is remembered for a day, and a run
deleted sooner would let a retried start create it again (as an event's id would let a
redelivered event through)."""

_DEFAULT_DATABASE = "sqlite:///.tarry/tarry.db"
_SQLITE_PREFIX = "sqlite:///"
_DATABASE_PREFIXES = (_SQLITE_PREFIX, "postgresql://", "postgres://")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IMPORT_REF = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


@dataclass(frozen=True)
class Limits:
    """The bounds and cadence of holds (the hold gate in front of a run's first step)."""

    hold_max: timedelta = timedelta(hours=24)
    """How long a run may stay held before it is refused ``hold-expired``."""
    hold_after_max: timedelta = timedelta(days=30)
    """How far out a hold ``after`` may lie before the run is refused ``hold-after-beyond-max``."""
    check_interval: timedelta = timedelta(seconds=60)
    """Base interval between checks; never below :data:`CHECK_INTERVAL_FLOOR`."""
    check_timeout: timedelta = timedelta(seconds=10)
    """How long one check may run before it is terminated (and counted as a fault)."""
    check_max: int = 96
    """How many checks one hold may run before the run is refused ``hold-expired``."""
    check_faults: int = 5
    """Consecutive faulty checks after which the run is refused ``hold-unanswerable``."""
    check_slots: int = 1
    """How many checks may run at once across every worker sharing the store."""
    check_env: tuple[str, ...] = ()
    """The variables a check script receives besides :data:`CHECK_BASE_ENV` (never a
    ``TARRY_*`` one): a check runs in a scrubbed environment."""
    request_bytes: int = 1_048_576
    """The largest HTTP request body ``tarry serve`` reads (1 MiB); a larger one is refused
    (413) before it is read."""
    event_bytes: int = MIB
    """The largest event payload, as compact UTF-8 JSON (1 MiB); a larger event is refused
    before anything is stored."""
    value_bytes: int = MIB
    """The largest run input, step result or value a Python flow records (1 MiB); a larger
    step result fails the step (``error.type = value``)."""
    key_bytes: int = 512
    """The largest event id, run target or correlation value, as JSON (512 bytes)."""
    file_bytes: int = FILE_BYTES
    """The largest flow, event manifest or scenario file read (1 MiB); a larger one is
    refused before it is read. ``tarry.toml`` is held to the default."""
    recovery_max: int = 3
    """How many times in a row a run is taken over from a worker that died running it (a
    crash, ``os._exit``, a kill), with no checkpoint between, before it is failed with
    ``error.type = crashed`` instead of run again."""
    shown_bytes: int = 4096
    """The longest value a Python run's journal shows in its run document, as JSON (4 KiB);
    a longer one is shown truncated, with a marker."""
    action_timeout: timedelta = timedelta(minutes=5)
    """How long one call of an action may run when its step sets no ``timeout`` (5
    minutes); past it the call is cancelled (or, in a thread, abandoned) and the step fails
    with ``error.type = timeout``."""

    def __post_init__(self) -> None:
        if self.check_interval < CHECK_INTERVAL_FLOOR:
            object.__setattr__(self, "check_interval", CHECK_INTERVAL_FLOOR)

    @cached_property
    def values(self) -> ValueLimits:
        """The size limits of stored values (:mod:`tarry.values`); every start reads them,
        so they are built once."""
        return ValueLimits(event_bytes=self.event_bytes, value_bytes=self.value_bytes,
                           key_bytes=self.key_bytes)


@dataclass(frozen=True)
class Retention:
    """How long ended runs and settled events are kept (``[retention]``); None keeps them
    for ever, the default."""

    runs: timedelta | None = None
    """How long a run is kept after it ended (succeeded, failed, cancelled or refused)."""
    events: timedelta | None = None
    """How long a delivered, duplicate, discarded or unmatched event is kept after it was
    received (buffered and quarantined events are never deleted by retention)."""

    @property
    def on(self) -> bool:
        """Whether anything is ever deleted."""
        return self.runs is not None or self.events is not None


@dataclass(frozen=True)
class Settings:
    """Everything the project configuration decides, with every path made absolute."""

    root: Path
    """The project root: the folder holding ``tarry.toml`` (or the working directory)."""
    config_file: Path | None
    """The ``tarry.toml`` that was read, or ``None`` when there is none."""
    database: str
    """The store URL: ``sqlite:///…`` (with an absolute path) or ``postgresql://…``."""
    flows_dir: Path
    """The folder of YAML flows."""
    event_files: tuple[Path, ...]
    """The event manifest files (each has a top-level ``events:`` key)."""
    app: str | None
    """``"module:attribute"`` of the App holding Python flows, if any."""
    actions: Mapping[str, str]
    """Read-only: action name → ``"module:function"``."""
    checks: Mapping[str, Path]
    """Read-only: check name → absolute path of its executable."""
    limits: Limits = field(default_factory=Limits)
    """Hold bounds and check cadence."""
    provided_actions: frozenset[str] = frozenset()
    """Actions that exist where the project runs but are imported by no module here (an
    installed package's entry point, another deployment's worker): flows that call them
    load, and a scenario stubs them."""
    retention: Retention = field(default_factory=Retention)
    """How long ended runs and settled events are kept (off by default)."""
    calendars: Mapping[str, Calendar] = field(default_factory=lambda: MappingProxyType({}))
    """Read-only: calendar name → its business calendar (``[calendars.NAME]``)."""
    api_token: str | None = field(default=None, repr=False)
    """``TARRY_API_TOKEN``: the bearer token the HTTP API requires; environment only."""
    api_tokens: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}),
                                          repr=False)
    """``TARRY_API_TOKENS`` (``name=token,…``): read-only, principal name → its bearer token;
    environment only."""

    @property
    def sqlite_path(self) -> Path | None:
        """The SQLite database file, or ``None`` for another store."""
        return sqlite_path(self.database)

    @property
    def origin(self) -> str:
        """Which project these settings are: ``the project of /p/tarry.toml``, or that no
        ``tarry.toml`` was found (and where tarry looked)."""
        if self.config_file is not None:
            return f"the project of {self.config_file}"
        return f"no tarry.toml found in {self.root} or any folder above it, so the defaults apply"


def sqlite_path(url: str) -> Path | None:
    """The file of a ``sqlite:///path`` URL (``sqlite:////abs`` is absolute), else ``None``."""
    if not url.startswith(_SQLITE_PREFIX):
        return None
    return Path(url.removeprefix(_SQLITE_PREFIX))


def load_settings(cwd: Path | None = None, env: Mapping[str, str] | None = None, *,
                  unreadable_actions: dict[str, str] | None = None) -> Settings:
    """Read ``tarry.toml`` (found from ``cwd`` upwards) and the ``TARRY_*`` variables of ``env``.

    ``cwd`` defaults to the working directory and ``env`` to ``os.environ``. Raise
    :class:`~tarry.errors.ConfigError` on any invalid value — except, when
    ``unreadable_actions`` is given, a malformed ``[actions]`` entry: it is put there (name →
    why) and left out, so that ``tarry validate`` reports it along with everything else.
    """
    start = (cwd or Path.cwd()).resolve()
    environ = os.environ if env is None else env
    config_file = _find_config(start)
    root = config_file.parent if config_file else start
    tables = _read_file(config_file) if config_file else {}
    file = str(config_file)
    values = {**_file_values(tables, file, _SETTINGS), **_env_values(environ, _SETTINGS)}
    retention = {**_file_values(tables, file, ("retention",)),
                 **_env_values(environ, ("retention",))}
    actions, mistakes = _file_actions(tables.get("actions", {}), file)
    if mistakes and unreadable_actions is None:
        raise ConfigError(*mistakes.values())
    unreadable_actions = {} if unreadable_actions is None else unreadable_actions
    unreadable_actions.update(mistakes)
    provided = values.pop("provided_actions", ())
    _check_provided(provided, actions, "TARRY_PROVIDED_ACTIONS"
                    if environ.get("TARRY_PROVIDED_ACTIONS", "").strip()
                    else f"{file}: [tarry] provided_actions")
    checks = {**_file_checks(tables.get("checks", {}), file),
              **_env_checks(environ.get("TARRY_CHECKS", ""))}
    return Settings(
        root=root,
        config_file=config_file,
        database=_resolve_database(values.pop("database", _DEFAULT_DATABASE), root),
        flows_dir=root / values.pop("flows", "flows"),
        event_files=tuple(root / name for name in values.pop("events", ["events.yaml"])),
        app=values.pop("app", None),
        actions=MappingProxyType(actions),
        provided_actions=frozenset(provided),
        checks=MappingProxyType(checks),
        limits=replace(Limits(), **values),
        retention=Retention(**retention),
        calendars=MappingProxyType(read_calendars(tables.get("calendars", {}), file, root)),
        api_token=environ.get("TARRY_API_TOKEN") or None,
        api_tokens=MappingProxyType(_env_tokens(environ.get("TARRY_API_TOKENS", ""))),
    )


# --- finding and reading the file -------------------------------------------------------------

def _find_config(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_FILE
        if candidate.is_file():
            return candidate
    return None


def _read_file(path: Path) -> dict[str, dict[str, Any]]:
    """``tarry.toml``, within the default ``file_bytes`` (the file that could raise it)."""
    try:
        text = read_source(path)
    except LoadError as exc:
        raise ConfigError(f"{path}: {exc.problems[0].message}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    except RecursionError:  # tomllib reads nested arrays and tables recursively
        raise ConfigError(f"{path}: not valid TOML: arrays or tables nested too deeply") from None
    except ValueError:  # an integer longer than Python converts (4,300 digits)
        raise ConfigError(f"{path}: not valid TOML: a number is too long") from None
    return _check_tables(document, str(path))


def _check_tables(document: dict[str, Any], file: str) -> dict[str, dict[str, Any]]:
    for name, value in document.items():
        if name not in _TABLES:
            raise ConfigError(f"{file}: {_unknown_top_level(name, value)}")
        if not isinstance(value, dict):
            raise ConfigError(f"{file}: '{name}' must be a table ([{name}]), got {_show(value)}")
    for table, keys in _FIXED_KEYS.items():
        unknown = [name for name in document.get(table, {}) if name not in keys]
        if unknown:
            raise ConfigError(f"{file}: [{table}] unknown key '{unknown[0]}'"
                              + did_you_mean(unknown[0], keys))
    return document


def _unknown_top_level(name: str, value: object) -> str:
    owner = next((table for table, keys in _FIXED_KEYS.items() if name in keys), None)
    if owner and not isinstance(value, dict):
        return f"'{name}' must be written inside the [{owner}] table"
    return f"unknown table [{name}]" + did_you_mean(name, _TABLES)


# --- converting values ------------------------------------------------------------------------

def _show(value: object) -> str:
    """A value as a message shows it: strings quoted, anything else with its TOML type."""
    if isinstance(value, str):
        return f'"{value}"'
    kind = next((label for kind, label in _TYPE_NAMES if isinstance(value, kind)), "a value")
    return f"{json.dumps(value, default=str)} ({kind})"


_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"), (int, "an integer"), (float, "a float"), (str, "a string"),
    (list, "an array"), (dict, "a table"),
)


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: expected a non-empty string, got {_show(value)}")
    return value.strip()


def _database(value: object, where: str) -> str:
    url = _text(value, where)
    if not url.startswith(_DATABASE_PREFIXES):
        raise ConfigError(f"{where}: expected a sqlite:///path or postgresql:// URL, "
                          f"got {_show(redact_database_url(url))}")
    return url


def _import_ref(value: object, where: str) -> str:
    ref = _text(value, where)
    if not _IMPORT_REF.fullmatch(ref):
        raise ConfigError(f'{where}: expected "module:attribute" such as '
                          f'"myproject.flows:app", got {_show(ref)}')
    return ref


def _file_list(value: object, where: str) -> list[str]:
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected an array of file names such as "
                          f'["events.yaml"], got {_show(value)}')
    return [_text(item, f"{where}[{index}]") for index, item in enumerate(value)]


def _action_names(value: object, where: str) -> list[str]:
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected an array of action names such as "
                          f'["billing.charge"], got {_show(value)}')
    return [_text(item, f"{where}[{index}]") for index, item in enumerate(value)]


def _comma_list(value: str, where: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def _duration(value: object, where: str) -> timedelta:
    if not isinstance(value, str):
        raise ConfigError(f'{where}: expected a duration string such as "24h", '
                          f"got {_show(value)}")
    try:
        parsed = parse_duration(value)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if parsed <= timedelta(0):
        raise ConfigError(f"{where}: expected a duration longer than zero, got {_show(value)}")
    return parsed


def retention_duration(value: object, where: str) -> timedelta:
    """A retention period (``[retention]``, ``tarry purge --older-than``): a duration of at
    least :data:`RETENTION_FLOOR`; ``ConfigError`` otherwise."""
    parsed = _duration(value, where)
    if parsed < RETENTION_FLOOR:
        raise ConfigError(f"{where}: keep at least a day (a start's Idempotency-Key and an "
                          f"event's id are remembered that long), got {_show(value)}")
    return parsed


def _positive_int(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{where}: expected a positive integer, got {_show(value)}")
    return value


def _positive_int_text(value: str, where: str) -> int:
    digits = value.strip()
    if not digits.isdecimal() or int(digits) < 1:
        raise ConfigError(f"{where}: expected a positive integer, got {_show(value)}")
    return int(digits)


def _env_names(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ConfigError(f'{where}: expected an array of variable names such as '
                          f'["JIRA_TOKEN"], got {_show(value)}')
    return tuple(_env_name(item, f"{where}[{index}]") for index, item in enumerate(value))


def _comma_env_names(value: str, where: str) -> tuple[str, ...]:
    return tuple(_env_name(name, where) for name in _comma_list(value, where))


def _env_name(value: object, where: str) -> str:
    name = _text(value, where)
    if not _ENV_NAME.fullmatch(name):
        raise ConfigError(f"{where}: {_show(name)} is not an environment variable name")
    if name.startswith("TARRY_"):
        raise ConfigError(f"{where}: a check never receives tarry's own variables "
                          f"({_show(name)}); they hold the database URL and the API tokens")
    return name


def _check_path(value: object, where: str) -> Path:
    path = Path(_text(value, where))
    if not path.is_absolute():
        raise ConfigError(f"{where}: a check path must be absolute, got {_show(str(path))}")
    return path


@dataclass(frozen=True)
class _Key:
    """One fixed key: its variable, and how to read it from the file and from the variable."""

    env: str
    from_file: Callable[[object, str], Any]
    from_env: Callable[[str, str], Any]

    @classmethod
    def plain(cls, env: str, read: Callable[[object, str], Any]) -> _Key:
        """A key read the same way from the file and from its variable (a string)."""
        return cls(env, read, read)


_FIXED_KEYS: dict[str, dict[str, _Key]] = {
    "tarry": {
        "database": _Key.plain("TARRY_DATABASE", _database),
        "flows": _Key.plain("TARRY_FLOWS", _text),
        "events": _Key("TARRY_EVENTS", _file_list, _comma_list),
        "app": _Key.plain("TARRY_APP", _import_ref),
        "provided_actions": _Key("TARRY_PROVIDED_ACTIONS", _action_names, _comma_list),
    },
    "limits": {
        "hold_max": _Key.plain("TARRY_HOLD_MAX", _duration),
        "hold_after_max": _Key.plain("TARRY_HOLD_AFTER_MAX", _duration),
        "check_interval": _Key.plain("TARRY_CHECK_INTERVAL", _duration),
        "check_timeout": _Key.plain("TARRY_CHECK_TIMEOUT", _duration),
        "check_max": _Key("TARRY_CHECK_MAX", _positive_int, _positive_int_text),
        "check_faults": _Key("TARRY_CHECK_FAULTS", _positive_int, _positive_int_text),
        "check_slots": _Key("TARRY_CHECK_SLOTS", _positive_int, _positive_int_text),
        "check_env": _Key("TARRY_CHECK_ENV", _env_names, _comma_env_names),
        "request_bytes": _Key("TARRY_REQUEST_BYTES", _positive_int, _positive_int_text),
        "event_bytes": _Key("TARRY_EVENT_BYTES", _positive_int, _positive_int_text),
        "value_bytes": _Key("TARRY_VALUE_BYTES", _positive_int, _positive_int_text),
        "key_bytes": _Key("TARRY_KEY_BYTES", _positive_int, _positive_int_text),
        "file_bytes": _Key("TARRY_FILE_BYTES", _positive_int, _positive_int_text),
        "recovery_max": _Key("TARRY_RECOVERY_MAX", _positive_int, _positive_int_text),
        "shown_bytes": _Key("TARRY_SHOWN_BYTES", _positive_int, _positive_int_text),
        "action_timeout": _Key.plain("TARRY_ACTION_TIMEOUT", _duration),
    },
    "retention": {
        "runs": _Key.plain("TARRY_RETENTION_RUNS", retention_duration),
        "events": _Key.plain("TARRY_RETENTION_EVENTS", retention_duration),
    },
}
_TABLES = ("tarry", "actions", "checks", "limits", "retention", "calendars")
_SETTINGS = ("tarry", "limits")
"""The tables whose keys are :class:`Settings` fields or :class:`Limits` ones."""


# --- gathering values -------------------------------------------------------------------------

def _file_values(tables: Mapping[str, Mapping[str, Any]], file: str,
                 which: tuple[str, ...]) -> dict[str, Any]:
    return {name: _FIXED_KEYS[table][name].from_file(tables[table][name],
                                                     f"{file}: [{table}] {name}")
            for table in which for name in _FIXED_KEYS[table] if name in tables.get(table, {})}


def _env_values(environ: Mapping[str, str], which: tuple[str, ...]) -> dict[str, Any]:
    return {name: key.from_env(environ[key.env], key.env)
            for table in which
            for name, key in _FIXED_KEYS[table].items() if environ.get(key.env, "").strip()}


def _file_actions(table: Mapping[str, Any],
                  file: str) -> tuple[dict[str, str], dict[str, str]]:
    """``[actions]``: the well-formed entries, and why each other one is not (by name)."""
    actions: dict[str, str] = {}
    mistakes: dict[str, str] = {}
    for name, ref in table.items():
        try:
            actions[name] = _import_ref(ref, f"{file}: [actions] {name}")
        except ConfigError as exc:
            mistakes[name] = str(exc)
    return actions, mistakes


def _check_provided(provided: Collection[str], actions: Mapping[str, str], where: str) -> None:
    """An action provided elsewhere is no built-in and not imported through ``[actions]``."""
    mistakes = [f"{where}: '{name}' is a built-in action; list only actions that no module "
                "here provides" for name in provided if name in BUILTIN_ACTIONS]
    mistakes += [f"{where}: '{name}' is also in [actions]; an action is imported through "
                 "[actions] or provided elsewhere, not both" for name in provided
                 if name in actions]
    if mistakes:
        raise ConfigError(*mistakes)


def _file_checks(table: Mapping[str, Any], file: str) -> dict[str, Path]:
    return {name: _check_path(path, f"{file}: [checks] {name}") for name, path in table.items()}


def _env_checks(value: str) -> dict[str, Path]:
    """``name:/abs/path,…``, each entry split on its first colon (paths may hold colons)."""
    checks = {}
    for entry in (item.strip() for item in value.split(",")):
        if not entry:
            continue
        name, colon, path = entry.partition(":")
        if not (colon and name.strip() and path.strip()):
            raise ConfigError(f"TARRY_CHECKS: entry {_show(entry)} is not "
                              "name:/absolute/path")
        checks[name.strip()] = _check_path(path, f"TARRY_CHECKS: {name.strip()}")
    return checks


_PRINCIPAL = re.compile(r"[A-Za-z0-9_.@-]+")


def _env_tokens(value: str) -> dict[str, str]:
    """``name=token,…``: each entry split on its first ``=``. A message never shows a token."""
    tokens: dict[str, str] = {}
    entries = [item.strip() for item in value.split(",") if item.strip()]
    for index, entry in enumerate(entries, start=1):
        name, equals, token = (part.strip() for part in entry.partition("="))
        if not (equals and token) or not _PRINCIPAL.fullmatch(name):
            raise ConfigError(f"TARRY_API_TOKENS: entry {index} is not name=token (a name of "
                              "letters, digits, '_', '.', '@' or '-', then '=' and the token)")
        if name in tokens:
            raise ConfigError(f"TARRY_API_TOKENS: the principal '{name}' is named twice")
        tokens[name] = token
    return tokens


def _resolve_database(url: str, root: Path) -> str:
    path = sqlite_path(url)
    if path is None or path.is_absolute() or str(path) == ":memory:":
        return url
    return f"{_SQLITE_PREFIX}{root / path}"


# --- calendars --------------------------------------------------------------------------------

_CALENDAR_KEYS = ("timezone", "hours", "holidays", "holidays_file")
_CALENDAR_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]*")


def read_calendars(table: Mapping[str, Any], file: str, root: Path) -> dict[str, Calendar]:
    """``[calendars.NAME]`` tables as business calendars; a ``holidays_file`` is read relative
    to the project ``root``. ``ConfigError`` naming the table and key for any mistake."""
    return {name: _calendar(name, value, f"{file}: [calendars.{name}]", root)
            for name, value in table.items()}


def _calendar(name: str, value: object, where: str, root: Path) -> Calendar:
    if not _CALENDAR_NAME.fullmatch(name):
        raise ConfigError(f"{where}: a calendar's name must match [a-z0-9][a-z0-9_.-]*")
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a table such as [calendars.{name}] with "
                          f"timezone and hours, got {_show(value)}")
    unknown = [key for key in value if key not in _CALENDAR_KEYS]
    if unknown:
        raise ConfigError(f"{where} unknown key '{unknown[0]}'"
                          + (did_you_mean(unknown[0], _CALENDAR_KEYS)
                             or f" (expected one of: {', '.join(_CALENDAR_KEYS)})"))
    for key in ("timezone", "hours"):
        if key not in value:
            raise ConfigError(f"{where} missing '{key}'" + (
                ' (an IANA zone such as "Europe/Berlin": hours are read on its clock)'
                if key == "timezone" else ' (such as { "mon-fri" = "09:00-17:00" })'))
    holidays = _holiday_dates(value.get("holidays", []), f"{where} holidays")
    if "holidays_file" in value:
        holidays |= _holiday_file(value["holidays_file"], f"{where} holidays_file", root)
    try:
        return Calendar(name, _zone(value["timezone"], f"{where} timezone"),
                        _hours(value["hours"], f"{where} hours"), frozenset(holidays))
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _zone(value: object, where: str) -> ZoneInfo:
    name = _text(value, where)
    try:
        return parse_zone(name)
    except ValueError:
        raise ConfigError(f"{where}: unknown timezone {_show(name)}"
                          + (did_you_mean(name, available_timezones())
                             or " (use an IANA name such as Europe/Berlin)")) from None


def _hours(value: object, where: str) -> tuple[tuple[tuple[int, int], ...], ...]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f'{where}: expected a table of weekdays to hours such as '
                          f'{{ "mon-fri" = "09:00-17:00", "sat" = "10:00-14:00" }}, '
                          f"got {_show(value)}")
    try:
        return parse_hours(value)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _holiday_dates(value: object, where: str) -> set[date]:
    if not isinstance(value, list):
        raise ConfigError(f'{where}: expected an array of dates such as ["2026-12-25"], '
                          f"got {_show(value)}")
    days = set()
    for index, item in enumerate(value):
        if isinstance(item, date):  # TOML's own local date, written unquoted
            days.add(item)
            continue
        text = _text(item, f"{where}[{index}]")
        try:
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
                raise ValueError
            days.add(date.fromisoformat(text))
        except ValueError:
            raise ConfigError(f"{where}[{index}]: {_show(text)} is not a real date "
                              "(YYYY-MM-DD, such as 2026-12-25)") from None
    return days


def _holiday_file(value: object, where: str, root: Path) -> set[date]:
    path = root / _text(value, where)
    try:
        with path.open("rb") as opened:
            content = opened.read(FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read {path} ({exc.strerror})") from None
    if len(content) > FILE_BYTES:
        raise ConfigError(f"{where}: {path} is larger than {FILE_BYTES:,} bytes")
    try:
        return set(read_holidays(content))
    except ValueError as exc:
        raise ConfigError(f"{where}: {path}: {exc}") from None

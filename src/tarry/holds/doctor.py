"""``tarry doctor``: what would go wrong in this deployment, found before a run meets it.

Each finding is an error (a worker that will not start, or runs that will be refused), a
warning (harmless today, probably a mistake), or a passed check. In order:

1. the configuration parses (``tarry.toml`` and the ``TARRY_*`` variables, ``TARRY_CHECKS``
   included); nothing else is looked at when it does not;
2. every declared check's path exists, is a file and is executable;
3. the event manifests and every flow of the flows folder validate;
4. every check a flow names (in ``hold:`` or a ``check`` step) is declared — an error, its
   runs would be refused ``check-unknown`` — and every declared check is named by some flow —
   a warning, nothing looks it up;
5. every literal ``after`` lies within ``hold_after_max`` of now — else its runs would be
   refused ``hold-after-beyond-max``;
6. every signed event type's ``secret_env`` variable is set — else ``tarry serve`` refuses
   to start;
7. every business calendar (``[calendars.NAME]``) opens within two years, said with when it
   next opens; one that no flow names is a warning;
8. the store is reachable and migrated;
9. with retention of runs off, the store holds at most :data:`ENDED_RUNS_WARNING` ended
   runs — else a warning: it only grows.

Who may edit a check script is not checked: that is the operator's to keep tight.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from urllib.parse import urlsplit

from tarry._suggest import did_you_mean
from tarry.clock import iso
from tarry.config import Settings, load_settings
from tarry.errors import ConfigError, LoadError, TarryError
from tarry.holds.checks import is_executable_file
from tarry.language.business import calendars_used
from tarry.language.calendars import Calendar
from tarry.language.durations import format_duration
from tarry.language.loader import BUILTIN_ACTIONS, load_flow
from tarry.language.manifests import Manifest, load_manifests
from tarry.language.model import (
    Action,
    Construct,
    Flow,
    ForEach,
    Group,
    HoldAfter,
    HoldCheck,
    Position,
    Repeat,
    Scope,
    Step,
    WaitFor,
)
from tarry.secrets import Redactor, unset_secrets
from tarry.store import open_store

__all__ = ["ENDED_RUNS_WARNING", "Finding", "Level", "calendar_findings", "checks_named",
           "diagnose", "path_problem"]

ENDED_RUNS_WARNING = 1_000_000
"""More ended runs than this in a store with retention off is a warning."""

_YAML_SUFFIXES = (".yaml", ".yml")


class Level(StrEnum):
    """How much a finding matters: errors make ``tarry doctor`` exit 1."""

    ERROR = "error"
    WARNING = "warning"
    OK = "ok"


@dataclass(frozen=True)
class Finding:
    """One thing ``tarry doctor`` found, about one ``topic`` (config, check, flow, ...)."""

    level: Level
    topic: str
    message: str

    def document(self) -> dict[str, str]:
        """The ``--json`` form."""
        return {"level": self.level.value, "topic": self.topic, "message": self.message}

    def __str__(self) -> str:
        return f"{self.level.value}: {self.message}"


def diagnose(now: datetime, *, cwd: Path | None = None,
             env: Mapping[str, str] | None = None,
             ended_runs_warning: int = ENDED_RUNS_WARNING) -> list[Finding]:
    """Every finding about the project around ``cwd`` (default: the working directory) with
    the variables of ``env`` (default: the process's), ``now`` being the current instant;
    a store holding more than ``ended_runs_warning`` ended runs with retention off is
    warned about. Database passwords and API tokens are masked in every message."""
    redact = Redactor.from_environment(env)
    try:
        settings = load_settings(cwd, env)
    except ConfigError as exc:
        return [Finding(Level.ERROR, "config", redact(str(message))) for message in exc.args]
    findings = [Finding(Level.OK, "config", f"the configuration parses ({settings.origin})")]
    findings += _check_paths(settings.checks)
    flows, manifests, problems = _load_flows(settings, (cwd or Path.cwd()).resolve())
    findings += problems
    findings += _named_checks(flows, settings.checks)
    findings += _far_afters(flows, settings, now)
    findings += _secrets(manifests, os.environ if env is None else env)
    findings += calendar_findings(flows, settings.calendars, now)
    findings += _store(settings, now, ended_runs_warning)
    return [replace(finding, message=redact(finding.message)) for finding in findings]


# -- checks ------------------------------------------------------------------------------------

_PATH_PROBLEMS = (
    (Path.exists, "does not exist"),
    (Path.is_file, "is not a file"),
    (is_executable_file, "is not executable (chmod +x it)"),
)


def path_problem(path: Path) -> str | None:
    """What is wrong with ``path`` as a check's executable (``does not exist``, ``is not a
    file``, ``is not executable (chmod +x it)``), or None."""
    return next((what for passes, what in _PATH_PROBLEMS if not passes(path)), None)


def _check_paths(checks: Mapping[str, Path]) -> list[Finding]:
    findings = []
    for name, path in sorted(checks.items()):
        problem = path_problem(path)
        findings.append(Finding(Level.ERROR, "check", f"check '{name}': {path} {problem}")
                        if problem else
                        Finding(Level.OK, "check", f"check '{name}': {path} is executable"))
    return findings


def _named_checks(flows: list[Flow], declared: Mapping[str, Path]) -> list[Finding]:
    named = [(name, pos) for flow in flows for name, pos in checks_named(flow)]
    findings = [Finding(Level.ERROR, "check",
                        f"{pos}: check '{name}' is not declared"
                        f"{did_you_mean(name, declared)}; its runs would be refused "
                        "check-unknown (declare it in [checks] or TARRY_CHECKS)")
                for name, pos in named if name not in declared]
    used = {name for name, _ in named}
    findings += [Finding(Level.WARNING, "check",
                         f"check '{name}' is declared but no flow names it")
                 for name in sorted(declared) if name not in used]
    return findings


def checks_named(flow: Flow) -> Iterator[tuple[str, Position]]:
    """The checks ``flow`` names: in its ``hold`` and in literal ``check`` steps."""
    for condition in flow.hold:
        if isinstance(condition, HoldCheck):
            yield condition.name, condition.pos
    for step in _all_steps(flow.body):
        construct = step.construct
        if isinstance(construct, Action) and construct.name == "check" \
                and isinstance(construct.args, dict) \
                and isinstance(name := construct.args.get("name"), str) and "{{" not in name:
            yield name, step.pos


def _all_steps(scope: Scope) -> Iterator[Step]:
    for step in (*scope.steps, *scope.recover):
        yield step
        for inner in _inner_scopes(step.construct):
            yield from _all_steps(inner)


def _inner_scopes(construct: Construct) -> list[Scope]:
    if isinstance(construct, Repeat | ForEach | Group):
        return [construct.steps]
    if isinstance(construct, WaitFor) and construct.remind is not None:
        return [construct.remind.steps]
    return []


def calendar_findings(flows: list[Flow], calendars: Mapping[str, Calendar],
                      now: datetime) -> list[Finding]:
    """Each calendar: open now (until when) or when it next opens, on its own clock; an
    error when it does not open within two years, a warning when no flow names it."""
    used = set().union(*(calendars_used(flow) for flow in flows)) if flows else set()
    findings = []
    for name, calendar in sorted(calendars.items()):
        try:
            opens = calendar.next_open(now)
        except ValueError as exc:
            findings.append(Finding(Level.ERROR, "calendar", f"{exc}: every wait on it would "
                                                             "fail with error type calendar"))
            continue
        state = (f"open now, until {calendar.wall_clock(calendar.next_close(now))}"
                 if opens == now else f"next opens {calendar.wall_clock(opens)}")
        findings.append(Finding(Level.OK, "calendar", f"calendar '{name}': {state}"))
        if name not in used:
            findings.append(Finding(Level.WARNING, "calendar",
                                    f"calendar '{name}' is configured but no flow names it"))
    return findings


def _far_afters(flows: list[Flow], settings: Settings, now: datetime) -> list[Finding]:
    latest = now + settings.limits.hold_after_max
    return [Finding(Level.ERROR, "after",
                    f"{condition.pos}: 'after' {iso(condition.instant)} lies more than "
                    f"{format_duration(settings.limits.hold_after_max)} ahead; its runs would "
                    "be refused hold-after-beyond-max")
            for flow in flows for condition in flow.hold
            if isinstance(condition, HoldAfter) and condition.instant > latest]


# -- flows and manifests -----------------------------------------------------------------------

def _load_flows(settings: Settings,
                cwd: Path) -> tuple[list[Flow], dict[str, Manifest], list[Finding]]:
    manifests: dict[str, Manifest] | None = None
    findings: list[Finding] = []
    try:
        manifests = load_manifests(settings.event_files, settings.limits.file_bytes)
    except LoadError as exc:
        findings += [Finding(Level.ERROR, "manifest", str(problem)) for problem in exc.problems]
    actions = BUILTIN_ACTIONS | frozenset(settings.actions) | settings.provided_actions
    flows: list[Flow] = []
    for path in _flow_files(settings.flows_dir, cwd):
        try:
            flows.append(load_flow(path, actions=actions, manifests=manifests,
                                   max_bytes=settings.limits.file_bytes,
                                   calendars=settings.calendars))
        except LoadError as exc:
            findings += [Finding(Level.ERROR, "flow", str(problem)) for problem in exc.problems]
    if not findings:
        findings.append(Finding(Level.OK, "flow", f"{len(flows)} flow file(s) and the event "
                                                  "manifests validate"))
    return flows, manifests or {}, findings


def _secrets(manifests: Mapping[str, Manifest], environ: Mapping[str, str]) -> list[Finding]:
    unset = unset_secrets(manifests, environ)
    if unset:
        return [Finding(Level.ERROR, "webhook", f"{problem}; `tarry serve` refuses to start "
                                                "until it is set") for problem in unset]
    signed = sum(manifest.secret_env is not None for manifest in manifests.values())
    return [Finding(Level.OK, "webhook", f"the secrets of {signed} signed event type(s) "
                                         "are set")] if signed else []


def _flow_files(folder: Path, cwd: Path) -> list[Path]:
    """The YAML files of ``folder``, relative to ``cwd`` when below it (as messages show
    them)."""
    if not folder.is_dir():
        return []
    return sorted(path.relative_to(cwd) if path.is_relative_to(cwd) else path
                  for path in folder.rglob("*") if path.suffix in _YAML_SUFFIXES)


# -- the store ---------------------------------------------------------------------------------

def _store(settings: Settings, now: datetime, ended_runs_warning: int) -> list[Finding]:
    where = _store_name(settings)
    if settings.sqlite_path is not None and not settings.sqlite_path.exists():
        return [Finding(Level.WARNING, "store",
                        f"the store ({where}) does not exist yet: the first command that "
                        "starts a run or sends an event creates it (or run `tarry migrate`)")]
    ended: int | None = None
    try:
        store = open_store(settings.database, check_schema=False)
        try:
            pending = store.pending_migrations()
            if pending == [] and settings.retention.runs is None:
                ended = store.count_ended_runs(now)
        finally:
            store.close()
    except TarryError as exc:
        return [Finding(Level.ERROR, "store", f"the store ({where}) is not usable: {exc}")]
    findings = [_migrated(where, pending)]
    if ended is not None and ended > ended_runs_warning:
        findings.append(Finding(
            Level.WARNING, "retention",
            f"the store holds {ended:,} ended runs and retention is off, so it only grows: "
            'set [retention] runs = "30d" (and events = "7d") in tarry.toml, or '
            "TARRY_RETENTION_RUNS, and the workers delete what expired"))
    return findings


def _migrated(where: str, pending: list[str] | None) -> Finding:
    if pending is None:
        return Finding(Level.WARNING, "store",
                       f"the store ({where}) is reachable but empty: the first command to use "
                       "it creates the schema (or run `tarry migrate`)")
    if pending:
        return Finding(Level.ERROR, "store",
                       f"the store ({where}) is not migrated: {', '.join(pending)} pending; "
                       "run `tarry migrate`")
    return Finding(Level.OK, "store", f"the store ({where}) is reachable and migrated")


def _store_name(settings: Settings) -> str:
    """The store, named without its credentials."""
    path = settings.sqlite_path
    if path is not None:
        return f"SQLite {path}"
    parts = urlsplit(settings.database)
    return f"PostgreSQL {parts.hostname or 'localhost'}{parts.path}"

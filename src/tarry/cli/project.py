"""The commands about the project itself: ``init``, ``validate`` and ``migrate``."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any

import typer

from tarry.actions import ActionRegistry
from tarry.cli.session import note, print_json
from tarry.config import Settings, load_settings
from tarry.engine.builtins import register_builtins
from tarry.engine.catalog import FlowFinder, ProgramSource, import_program_source
from tarry.errors import LoadError, Problem
from tarry.files import FILE_BYTES, read_source
from tarry.language.calls import call_problems
from tarry.language.loader import load_flow
from tarry.language.manifests import Manifest, parse_manifests
from tarry.language.model import Flow
from tarry.language.yamlsource import YamlMap, read_yaml
from tarry.scaffold import write_project
from tarry.store import open_store

__all__ = ["Validation", "init", "migrate", "validate", "validate_files"]

_YAML_SUFFIXES = (".yaml", ".yml")


def init(directory: Annotated[Path, typer.Argument(
        metavar="DIR", help="Where to create the project (created when missing).")] = Path(".")
         ) -> None:
    """Scaffold a project: tarry.toml, flows/, events.yaml and an example flow."""
    for path in write_project(directory):
        typer.echo(f"wrote {path}")
    enter = "" if directory == Path(".") else f"cd {directory} && "
    note(f"next: {enter}tarry run hello --follow")


@dataclass
class Validation:
    """What ``tarry validate`` found: the flow files and event manifests checked, problems."""

    files: list[str] = field(default_factory=list)
    manifests: list[str] = field(default_factory=list)
    apps: list[str] = field(default_factory=list)
    configs: list[str] = field(default_factory=list)
    """The project configuration, when an ``[actions]`` entry of it cannot be imported."""
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether no file had a problem."""
        return not self.problems

    def document(self) -> dict[str, Any]:
        """The ``--json`` document."""
        return {"ok": self.ok, "files": self.files, "manifests": self.manifests,
                "apps": self.apps,
                "problems": [{"file": p.file, "line": p.line, "column": p.column,
                              "message": p.message} for p in self.problems]}

    def summary(self) -> str:
        """The final line: how many files, how many problems."""
        if not self.files and not self.manifests and not self.apps:
            return "no flow files to validate"
        counts = [_count(len(names), noun) for names, noun in (
            (self.files, "flow file"), (self.manifests, "event manifest"),
            (self.apps, "app of Python flows"), (self.configs, "project configuration"))
            if names]
        checked = " and ".join([", ".join(counts[:-1]), counts[-1]] if len(counts) > 1
                               else counts)
        if self.ok:
            return f"{checked} valid"
        failing = len({p.file for p in self.problems})
        return f"{_count(len(self.problems), 'problem')} in {failing} of {checked}"


def validate(
        paths: Annotated[list[Path] | None, typer.Argument(
            metavar="PATH", exists=True,
            help="Flow files, manifests or folders (default: the project's flows folder).")]
        = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
        = False) -> None:
    """Validate flow files and event manifests; print file:line:col: message per problem."""
    unreadable: dict[str, str] = {}
    settings = load_settings(unreadable_actions=unreadable)
    app = None
    if settings.app is not None and not paths:  # the project's own flows: the app's too
        app = (settings.app, import_program_source(settings.app, root=settings.root))
    actions, unimportable = _action_names(settings, unreadable)
    result = validate_files(_yaml_files(paths or [settings.flows_dir]), actions,
                            manifest_files=settings.event_files, app=app,
                            max_bytes=settings.limits.file_bytes,
                            calendars=settings.calendars,
                            project=_project_flows(settings, actions, app))
    if unimportable:
        result.configs.append(unimportable[0].file)
        result.problems[:0] = unimportable
    if as_json:
        print_json(result.document())
    else:
        for problem in result.problems:
            typer.echo(str(problem))
    note(result.summary())
    if not result.ok:
        raise typer.Exit(1)


def validate_files(files: Iterable[Path], actions: Collection[str], *,
                   manifest_files: Iterable[Path] = (),
                   app: tuple[str, ProgramSource] | None = None,
                   max_bytes: int = FILE_BYTES,
                   calendars: Collection[str] = (),
                   project: Mapping[str, Flow] | None = None) -> Validation:
    """Validate every event manifest (the existing ``manifest_files`` and those among
    ``files``), then load every flow of ``files`` and check the Python flows of ``app`` (its
    reference and the app) against the declared event types, collecting every problem.
    While a manifest has problems, flows are checked without the event type checks (which
    would only echo them). A file over ``max_bytes`` is refused unread; flows may name the
    business ``calendars`` only. The ``call`` steps of the flows that load are checked
    against ``project`` (the project's flows by name) and the flows of ``files``."""
    result = Validation()
    given = list(files)
    flows = [path for path in given if not _is_event_manifest(path, max_bytes)]
    manifests = _unique([path for path in manifest_files if path.is_file()]
                        + [path for path in given if path not in flows])
    declared = _read_manifests(manifests, result, max_bytes)
    loaded: list[Flow] = []
    for path in flows:
        shown = _shown(path)
        result.files.append(shown)
        try:
            loaded.append(load_flow(Path(shown), actions=actions, manifests=declared,
                                    max_bytes=max_bytes, calendars=calendars))
        except LoadError as exc:
            result.problems.extend(exc.problems)
    known = {**(project or {}), **{flow.name: flow for flow in loaded}}
    for flow in loaded:
        result.problems.extend(call_problems(flow, known))
    if app is not None:
        result.apps.append(app[0])
        result.problems.extend(replace(problem, file=_shown(Path(problem.file)))
                               for problem in app[1].problems(declared))
    return result


def _project_flows(settings: Settings, actions: Collection[str],
                   app: tuple[str, ProgramSource] | None) -> dict[str, Flow]:
    """The flows a call may start: those of the project's flows folder that load, and the
    app's Python flows."""
    try:
        programs = app[1].programs({}) if app is not None else None
    except LoadError:  # the app's own problems are reported with the rest
        programs = None
    finder = FlowFinder(settings.flows_dir, actions, None, programs=programs,
                        file_bytes=settings.limits.file_bytes, calendars=settings.calendars)
    return {flow.name: flow for flow in finder.available()[0]}


def _read_manifests(paths: Iterable[Path], result: Validation,
                    max_bytes: int) -> dict[str, Manifest] | None:
    """The event types ``paths`` declare, their problems added to ``result``; None if any."""
    declared: dict[str, Manifest] = {}
    problems_before = len(result.problems)
    for path in paths:
        shown = _shown(path)
        result.manifests.append(shown)
        try:
            declared.update(parse_manifests(read_source(path, max_bytes, shown=shown), shown))
        except LoadError as exc:
            result.problems.extend(exc.problems)
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            result.problems.append(Problem(shown, 1, 1, f"cannot read the file ({reason})"))
    return declared if len(result.problems) == problems_before else None


def _unique(paths: Iterable[Path]) -> list[Path]:
    """``paths`` without a second mention of the same file."""
    seen: dict[Path, Path] = {}
    for path in paths:
        seen.setdefault(path.resolve(), path)
    return list(seen.values())


def _is_event_manifest(path: Path, max_bytes: int) -> bool:
    """Whether the file's top level is a mapping with an ``events:`` key (a file too large
    to read is not looked into: as a flow, it is refused for its size)."""
    try:
        text = read_source(path, max_bytes)
    except (OSError, UnicodeDecodeError, LoadError):
        return False
    root, _problems = read_yaml(text, str(path))
    return isinstance(root, YamlMap) and root.get("events") is not None


def _yaml_files(paths: Sequence[Path]) -> list[Path]:
    """Files as given; folders replaced by the YAML files in them (recursively, sorted)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix in _YAML_SUFFIXES))
        elif path.is_file():
            found.append(path)
    return found


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it lies below it."""
    try:
        return str(path.absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _action_names(settings: Settings, unreadable: Mapping[str, str],
                  ) -> tuple[dict[str, Mapping[str, Any] | None], list[Problem]]:
    """The actions flows may call, each ``[actions]`` entry that is malformed (``unreadable``,
    name → why) or cannot be imported among them (so the flows that call it are still
    checked), and a problem for each of those, at its line of ``tarry.toml``."""
    registry = ActionRegistry()
    register_builtins(registry)
    failed = registry.try_load_user_actions(settings.actions, root=settings.root,
                                            provided=settings.provided_actions)
    for name, why in unreadable.items():
        registry.register_unavailable(name, why)
    problems = []
    if settings.config_file is not None and (failed or unreadable):
        text = settings.config_file.read_text(encoding="utf-8")
        shown = _shown(settings.config_file)
        problems = sorted((Problem(shown, *_entry_position(text, "actions", name),
                                   message.removeprefix(f"{settings.config_file}: "))
                           for name, message in [*unreadable.items(), *failed]),
                          key=lambda problem: (problem.line, problem.column))
    return registry.declared_arguments(), problems


def _entry_position(toml: str, table: str, key: str) -> tuple[int, int]:
    """Line and column of ``key = …`` in the ``[table]`` of a TOML text (1, 1 if not found)."""
    current = None
    for number, line in enumerate(toml.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            current = stripped.strip("[]").strip()
        elif current == table and re.match(rf"""(["']?){re.escape(key)}\1\s*=""", stripped):
            return number, len(line) - len(line.lstrip()) + 1
    return 1, 1


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def migrate() -> None:
    """Apply pending schema migrations to the project's store."""
    store = open_store(load_settings().database, check_schema=False)
    try:
        applied = store.migrate()
    finally:
        store.close()
    for name in applied:
        typer.echo(f"applied {name}")
    if not applied:
        typer.echo("up to date")

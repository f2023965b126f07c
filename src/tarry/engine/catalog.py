"""Finding flows: by name in the project's flows folder, by file path, or by stored digest.

A run keeps the digest of the exact flow source it started with (saved in the store), so it
resumes against that definition on any worker, even after the file was edited or removed.

Python flows (functions registered on an App) are *programs*: the catalog knows them
by name and stores a small descriptor in place of a YAML source (``python:<flow name>``), so
their runs resume on any worker whose app registers that name; the executor hands such a run
to the program instead of the interpreter.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tarry._suggest import did_you_mean
from tarry._text import clip
from tarry.errors import ConfigError, FlowNotFound, LoadError, Problem
from tarry.files import FILE_BYTES, FileSignature, file_signature, read_source
from tarry.language.calendars import Calendar
from tarry.language.fields import NAME_PATTERN
from tarry.language.loader import load_flow, parse_flow
from tarry.language.manifests import Manifest
from tarry.language.model import Flow
from tarry.store.base import Store

if TYPE_CHECKING:
    from tarry.engine.interpreter import Env
    from tarry.engine.outcome import Outcome

__all__ = ["PROGRAM_PREFIX", "FlowCatalog", "FlowFinder", "Program", "ProgramSource",
           "import_program_source", "program_descriptor"]

_SUFFIXES = (".yaml", ".yml")
_FLOW_NAME = re.compile(NAME_PATTERN)

PROGRAM_PREFIX = "python:"
"""How the stored source of a Python flow begins (the rest is the flow's name)."""


class Program(Protocol):
    """A flow written as code (a Python flow of an App), advanced by its own runner."""

    @property
    def definition(self) -> Flow:
        """The flow as the engine stores and starts it: name, declared inputs, and the
        descriptor (:func:`program_descriptor`) as source; it has no steps."""
        ...

    async def advance(self, env: Env, state: dict[str, Any]) -> Outcome:
        """Advance one run (its ``state`` is the program's to mutate), like the interpreter."""
        ...

    async def replay(self, env: Env, state: dict[str, Any]) -> Outcome:
        """Re-execute what the run recorded in ``state`` (the whole state, its journal read
        back) and nothing more: no step is called, no wait registered, nothing checkpointed.
        ``Failed`` with ``nondeterminism`` when the code no longer makes the recorded calls;
        ``Blocked`` (on no wait) where the replay reached what the run has not finished."""
        ...


class ProgramSource(Protocol):
    """What ``[tarry] app = "module:attribute"`` names: an App holding Python flows."""

    def programs(self, manifests: Mapping[str, Manifest]) -> Mapping[str, Program]:
        """The app's flows by name, validating their event waits against ``manifests``."""
        ...

    def problems(self, manifests: Mapping[str, Manifest] | None) -> list[Problem]:
        """What is wrong in the app's flows before any run (``tarry validate`` lists it)."""
        ...


def program_descriptor(name: str) -> str:
    """The source stored for the Python flow ``name`` (its digest is this text's)."""
    return PROGRAM_PREFIX + name


def import_program_source(reference: str, *, root: Path | None = None) -> ProgramSource:
    """Import the App named ``"module:attribute"``, with the project ``root`` first on the
    import path (as for user actions)."""
    if root is not None and str(root) not in sys.path:
        sys.path.insert(0, str(root))
    module_name, _, attribute = reference.partition(":")
    try:
        found: object = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"[tarry] app = {reference!r}: cannot import it ({exc})") from exc
    if not callable(getattr(found, "programs", None)):
        raise ConfigError(f"[tarry] app = {reference!r} is not a tarry App (found "
                          f"{type(found).__name__})")
    return found  # type: ignore[return-value]


@dataclass
class _Listing:
    """The flows tree as last listed: its folders with their signatures, the flow files
    found in them (sorted, and by file name without the suffix), and the index of those
    files by flow name (built when a lookup needs it)."""

    folders: list[tuple[Path, FileSignature | None]]
    files: list[Path]
    stems: dict[str, list[Path]]
    names: dict[str, Path] | None = None

    @classmethod
    def of(cls, root: Path) -> _Listing:
        """Every folder under ``root`` (itself included, even when missing) with its
        signature, and every YAML file in them."""
        folders = [root] + ([p for p in root.rglob("*") if p.is_dir()] if root.is_dir()
                            else [])
        signed = [(folder, file_signature(folder)) for folder in folders]
        files = sorted(p for folder in folders if folder.is_dir() for p in folder.iterdir()
                       if p.suffix in _SUFFIXES)
        stems: dict[str, list[Path]] = {}
        for path in files:
            stems.setdefault(path.stem, []).append(path)
        return cls(signed, files, stems)

    def current(self) -> bool:
        """Whether no folder changed since (a file added, removed or renamed in it)."""
        return all(file_signature(folder) == signature for folder, signature in self.folders)


class FlowFinder:
    """Finds flows by name (in the flows folder or on the app) or by file path, without a
    store: what a command looks up before it opens one.

    Flows are loaded checked against ``manifests`` when given (their event types and
    ``match`` keys). A flow file is parsed once and kept with its signature (inode, size,
    modification time).

    A name is looked up first in the file named after it (``<name>.yaml`` or ``.yml``),
    then in an index of the folder's files by the name of the flow each holds, built from
    every file the first time a lookup needs it. A lookup costs a ``stat`` of each folder of
    the flows tree (to notice a file added, removed or renamed) and one of the file it
    resolves to, not one of every file: a file that changed (or a broken file that was
    fixed) is read again on the next lookup, and when the indexed file no longer holds the
    flow looked up, or when no file is indexed under that name (a flow renamed inside its
    file), every file is looked at again and the index rebuilt. Of two files holding flows
    of the same name, a file named after its flow wins, then the last in sorted order; a
    file that does not load is known by its file name, unless a flow that loads has it. A
    file over ``file_bytes`` is not read: it is refused for its size (``[limits]
    file_bytes``), which costs a ``stat``.
    """

    def __init__(self, flows_dir: Path, actions: Collection[str],
                 manifests: Mapping[str, Manifest] | None = None, *,
                 programs: Mapping[str, Program] | None = None,
                 file_bytes: int = FILE_BYTES, pools: Collection[str] | None = None,
                 calendars: Mapping[str, Calendar] | None = None,
                 stubs: Mapping[str, Program] | None = None) -> None:
        self.flows_dir = flows_dir
        self.calendars: Mapping[str, Calendar] = calendars or {}
        """The project's business calendars: a flow naming another is refused at load."""
        self.file_bytes = file_bytes
        self.pools = None if pools is None else frozenset(pools)
        """The slot pools the project declares, that ``limit:`` steps must name (None: not
        checked)."""
        self.actions = frozenset(actions)
        self.manifests = manifests
        self.programs: Mapping[str, Program] = programs or {}
        """The Python flows, by name (empty without an app)."""
        self.stubs: Mapping[str, Program] = stubs or {}
        """Flows replaced, by name, by programs standing in for them (a scenario's stubbed
        flows): found before the folder's and the app's."""
        self._files: dict[Path, tuple[FileSignature, Flow | LoadError]] = {}
        self._naming: dict[tuple[Path, str], tuple[FileSignature | None, bool]] = {}
        self._listing: _Listing | None = None

    def find(self, name_or_path: str) -> Flow:
        """The flow named ``name_or_path`` in the flows folder or on the app, or the YAML file
        at that path. A name both folder and app define is refused; a flow found nowhere is
        ``FlowNotFound``, with the names that come close."""
        named_file = _names_a_file(name_or_path)
        if named_file and Path(name_or_path).is_file():
            return self._load(Path(name_or_path))
        found = self._by_name(name_or_path)
        if found is not None:
            return found
        if named_file:
            raise FlowNotFound(f"no flow file at {name_or_path}", key=name_or_path)
        raise self._not_found(name_or_path, f" in {self.flows_dir}")

    def find_named(self, name: str) -> Flow:
        """The flow named ``name`` in the flows folder or on the app, and nothing else: what a
        caller who may not reach the file system asks for (the HTTP API). A path, ``..`` or
        anything that is not a flow name is ``FlowNotFound`` without a look at the disk, and
        its message names no folder."""
        found = self._by_name(name) if _FLOW_NAME.fullmatch(name) else None
        if found is None:
            raise self._not_found(name, " among the project's flows")
        return found

    def _by_name(self, name: str) -> Flow | None:
        """The flow ``name`` of the folder or the app, or None (a name both define is
        refused)."""
        if name in self.stubs:
            return self.stubs[name].definition
        program = self.programs.get(name)
        found = self._file_named(name, confirm_absence=program is None)
        if program is not None and found is not None:
            raise ConfigError(f"flow '{name}' is defined twice: by {found[0]} and "
                              "by a Python flow of the app; rename one")
        if program is not None:
            return program.definition
        return None if found is None else _flow_or_raise(found[1])

    def _not_found(self, name: str, where: str) -> FlowNotFound:
        also = " or on the app" if self.programs else ""
        known = [*self._names(self._current_listing()), *self.programs]
        return FlowNotFound(f"no flow named '{clip(name, 100)}'{where}{also}"
                            f"{did_you_mean(name, known)}", key=name)

    def program(self, flow: Flow) -> Program | None:
        """The program that runs ``flow``, or None for a YAML flow."""
        if not flow.source.startswith(PROGRAM_PREFIX):
            return None
        return self._program_named(flow.name)

    def _program_named(self, name: str) -> Program:
        program = self.stubs.get(name) or self.programs.get(name)
        if program is None:
            registered = ("this worker's app does not register it"
                          f"{did_you_mean(name, self.programs)}" if self.programs
                          else 'no app is configured (set [tarry] app = "module:attribute")')
            raise FlowNotFound(f"the run's flow is the Python flow '{name}', but {registered}",
                               key=name)
        return program

    def all_files(self) -> list[Path]:
        """Every YAML file in the flows folder, sorted (listed again only when a folder in
        it changed: a file added, removed or renamed)."""
        return self._current_listing().files

    def tree_version(self) -> object:
        """An object that stays the same (``is``) while no folder of the flows tree changes:
        a flow file added, removed or renamed gives a new one (not a file edited in place).
        Costs a ``stat`` of each folder."""
        return self._current_listing()

    def available(self) -> tuple[list[Flow], list[LoadError]]:
        """Every flow this catalog can start (the folder's files, then the app's Python
        flows), and the refusal of each flow file that does not load."""
        flows: list[Flow] = []
        refused: list[LoadError] = []
        for path in self.all_files():
            try:
                flows.append(self._load(path))
            except LoadError as exc:
                refused.append(exc)
        return flows + [program.definition for program in self.programs.values()], refused

    def available_naming(self, word: str) -> list[Flow]:
        """The flows of :meth:`available` that may name ``word`` (an event type), and maybe
        others: a file parsed before is taken as parsed, and another is parsed only when its
        text holds ``word`` (or a ``\\``, whose escape could spell it). So looking up the
        triggers of one event type reads the flow files without parsing those that cannot
        declare one, which is what a ``tarry send`` costs."""
        flows: list[Flow] = []
        for path in self.all_files():
            loaded = self._parsed(path)
            if loaded is None and self._may_name(path, word):
                loaded = self._entry(path)
            if isinstance(loaded, Flow):
                flows.append(loaded)
        return flows + [program.definition for program in self.programs.values()]

    def _may_name(self, path: Path, word: str) -> bool:
        """:func:`_may_name`, read again only when the file changed."""
        signature = file_signature(path)
        cached = self._naming.get((path, word))
        if cached is None or cached[0] != signature:
            cached = self._naming[path, word] = (signature,
                                                 _may_name(path, word, self.file_bytes))
        return cached[1]

    def _parsed(self, path: Path) -> Flow | LoadError | None:
        """What the file at ``path`` holds, if it was parsed as it is now; else None."""
        cached = self._files.get(path)
        if cached is None or cached[0] != file_signature(path):
            return None
        return cached[1]

    def _current_listing(self) -> _Listing:
        listing = self._listing
        if listing is None or not listing.current():
            listing = self._listing = _Listing.of(self.flows_dir)
        return listing

    def _names(self, listing: _Listing, *, rebuild: bool = False) -> dict[str, Path]:
        """The index of ``listing``'s files by flow name (see the class); built on first
        use, or again with ``rebuild``: it looks at every file."""
        if listing.names is None or rebuild:
            entries = [(path, self._entry(path)) for path in listing.files]
            named: dict[str, Path] = {}
            for path, loaded in entries:
                if isinstance(loaded, LoadError):
                    named.setdefault(path.stem, path)
            named.update({loaded.name: path for path, loaded in entries
                          if isinstance(loaded, Flow)})
            listing.names = named
        return listing.names

    def _file_named(self, name: str, *, confirm_absence: bool
                    ) -> tuple[Path, Flow | LoadError] | None:
        """The file the flow ``name`` is in and what it holds (the flow, or why it does not
        load), or None: the file named after it if it holds that flow, else the one the
        index names (each read again if it changed). When the indexed file no longer holds
        that flow — or, with ``confirm_absence``, when the index names no file — every
        file is looked at and the index rebuilt."""
        listing = self._current_listing()
        named_after = self._named_after(listing, name)
        if named_after is not None:
            return named_after
        path = self._names(listing).get(name)
        if path is not None:
            loaded = self._entry(path)
            if _holds(path, loaded, name):
                return path, loaded
        elif not confirm_absence:
            return None
        path = self._names(listing, rebuild=True).get(name)
        return None if path is None else (path, self._entry(path))

    def _named_after(self, listing: _Listing, name: str) -> tuple[Path, Flow] | None:
        """The last file of ``listing`` named ``name`` (``<name>.yaml`` or ``.yml``) that
        holds the flow ``name``, if any."""
        for path in reversed(listing.stems.get(name, [])):
            loaded = self._entry(path)
            if isinstance(loaded, Flow) and loaded.name == name:
                return path, loaded
        return None

    def _load(self, path: Path) -> Flow:
        """The flow in the file at ``path``, parsed again only when the file changed."""
        return _flow_or_raise(self._entry(path))

    def _entry(self, path: Path) -> Flow | LoadError:
        """The flow in the file at ``path`` or why it does not load, parsed again only when
        the file changed."""
        signature = file_signature(path)
        cached = self._files.get(path)
        if signature is None or cached is None or cached[0] != signature:
            cached = (signature or (0, 0, 0), self._parse(path))
            if signature is not None:
                self._files[path] = cached
        return cached[1]

    def _parse(self, path: Path) -> Flow | LoadError:
        try:
            return load_flow(path, actions=self.actions, manifests=self.manifests,
                             max_bytes=self.file_bytes, pools=self.pools,
                             calendars=self.calendars)
        except LoadError as exc:
            return exc


def _names_a_file(name_or_path: str) -> bool:
    """Whether ``name_or_path`` ends in a flow file's suffix (the string is looked at first:
    most lookups are by name)."""
    return name_or_path.endswith(_SUFFIXES) and Path(name_or_path).suffix in _SUFFIXES


def _may_name(path: Path, word: str, limit: int) -> bool:
    """Whether the text of the flow file at ``path`` holds ``word``, or an escape that could
    spell it (False for a file that cannot be read within ``limit`` bytes: it holds no flow)."""
    try:
        text = read_source(path, limit)
    except (OSError, UnicodeDecodeError, LoadError):
        return False
    return word in text or "\\" in text


def _holds(path: Path, loaded: Flow | LoadError, name: str) -> bool:
    """Whether the file at ``path``, holding ``loaded``, is still the one the index keeps
    under ``name``: its flow has that name, or it does not load and has that file name."""
    return path.stem == name if isinstance(loaded, LoadError) else loaded.name == name


def _flow_or_raise(loaded: Flow | LoadError) -> Flow:
    if isinstance(loaded, LoadError):
        raise loaded.with_traceback(None)
    return loaded


class FlowCatalog(FlowFinder):
    """Resolves flow names and digests to loaded :class:`Flow` objects (cached), saving each
    flow a run starts with in ``store``.

    A stored flow, which a run already started with, is not checked against the manifests
    again: it resumes whatever the manifests say now. Each digest is saved in the store once
    per catalog.
    """

    def __init__(self, flows_dir: Path, store: Store, actions: Collection[str],
                 manifests: Mapping[str, Manifest] | None = None, *,
                 programs: Mapping[str, Program] | None = None,
                 file_bytes: int = FILE_BYTES, pools: Collection[str] | None = None,
                 calendars: Mapping[str, Calendar] | None = None,
                 stubs: Mapping[str, Program] | None = None) -> None:
        super().__init__(flows_dir, actions, manifests, programs=programs,
                         file_bytes=file_bytes, pools=pools, calendars=calendars, stubs=stubs)
        self.store = store
        self._by_digest: dict[str, Flow] = {}

    def resolve(self, name_or_path: str) -> Flow:
        """The flow :meth:`find` finds, its source saved in the store."""
        return self.remember(self.find(name_or_path))

    def by_digest(self, digest: str) -> Flow:
        """The flow a run started with, from the store (read once per digest)."""
        flow = self._by_digest.get(digest)
        if flow is None:
            source = self.store.flow_source(digest)
            if source.startswith(PROGRAM_PREFIX):
                flow = self._program_named(source.removeprefix(PROGRAM_PREFIX)).definition
            else:
                flow = parse_flow(source, f"<stored flow {digest[:12]}>", actions=self.actions)
            self._by_digest[digest] = flow
        return flow

    def has_digest(self, digest: str) -> bool:
        """Whether :meth:`by_digest` answers for ``digest`` without reading the store."""
        return digest in self._by_digest

    def remember(self, flow: Flow) -> Flow:
        """``flow``, its source saved in the store unless this catalog already saved it."""
        if flow.digest not in self._by_digest:
            self.store.save_flow(flow.digest, flow.name, flow.source)
            self._by_digest[flow.digest] = flow
        return flow

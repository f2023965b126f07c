"""The fenced code blocks of the project's Markdown documents, and which test runs each.

Every fenced block of ``README.md`` and ``docs/*.md`` carries one directive, an HTML comment
(invisible when rendered) on the line right above its fence — or, for a block that opens its
document (the README's first lines are its two commands), on the line right below its
closing fence::

    <!-- run: tests/examples/test_readme.py -->
    <!-- not run: an excerpt of examples/waiting/flows/hello.yaml -->

``run:`` names the test module that runs the block, ``not run:`` says why none does. A test
module reads the blocks it runs through a :class:`Document` it opens with its own
``__file__``, when it is imported (at module level): reading a block whose directive does not
name the reader fails at once, and every block read is recorded in :data:`READS`, so
``tests/test_doc_blocks.py`` can import each module a directive names and see that it reads
every block marked for it. Other documents (the examples' READMEs) are read the same way,
without directives.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["COVERED", "READS", "ROOT", "TARRY", "Block", "Directive", "Document",
           "add_config", "add_event_types", "console_commands", "covered_documents",
           "example_copy", "fenced_blocks", "fresh_project", "run_console", "run_status",
           "shell", "shown_line"]

ROOT = Path(__file__).resolve().parents[1]
"""The repository root."""

TARRY = Path(sys.executable).parent / "tarry"
"""The ``tarry`` executable of the environment the tests run in."""

COVERED = ("README.md", "docs/*.md")
"""The documents whose every block carries a directive (globs under the root)."""

READS: dict[str, set[tuple[str, int]]] = {}
"""Test module (its path under the root) → the blocks it read: (document, line of the fence)."""

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_DIRECTIVE = re.compile(r"^<!-- (?P<kind>run|not run): (?P<value>.*?) -->$")


@dataclass(frozen=True)
class Directive:
    """What the comment above a block says: ``run`` (``value`` is a test module's path under
    the root) or ``not run`` (``value`` is the reason)."""

    kind: str
    value: str


@dataclass(frozen=True)
class Block:
    """One fenced block of a document."""

    document: str
    """The document's path under the root, such as ``docs/flows.md``."""
    line: int
    """The line of its opening fence, from 1."""
    language: str
    """The first word of the fence's info string (``yaml``, ``console``), or ``""``."""
    text: str
    """What the block shows, without the fences and the fence's indentation."""
    above: str
    """Where its directive belongs, stripped: the line right above the fence, or, for a block
    that opens its document, the line right below its closing fence."""

    @property
    def directive(self) -> Directive | None:
        """The block's directive, if the line where it belongs is one."""
        found = _DIRECTIVE.match(self.above)
        return Directive(found["kind"], found["value"]) if found else None

    @property
    def where(self) -> str:
        """``document:line``, for messages."""
        return f"{self.document}:{self.line}"


def _directive_line(lines: list[str], opening: int, closing: int) -> str:
    """Where the directive of the block fenced at ``opening`` and ``closing`` belongs."""
    if opening:
        return lines[opening - 1].strip()
    return lines[closing + 1].strip() if closing + 1 < len(lines) else ""


def fenced_blocks(text: str, document: str) -> list[Block]:
    """Every fenced block of the Markdown ``text`` (of ``document``), in order."""
    lines = text.split("\n")
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        closing = re.compile(rf"^ *{re.escape(fence[0])}{{{len(fence)},}} *$")
        end = next((n for n in range(index + 1, len(lines)) if closing.match(lines[n])),
                   len(lines))
        body = [line[indent:] if not line[:indent].strip() else line.lstrip()
                for line in lines[index + 1:end]]
        found.append(Block(document, index + 1, opening["info"].strip().split(" ")[0],
                           "".join(line + "\n" for line in body),
                           _directive_line(lines, index, end)))
        index = end + 1
    return found


def covered_documents() -> list[str]:
    """The documents whose blocks carry directives, as paths under the root."""
    return sorted(path.relative_to(ROOT).as_posix() for pattern in COVERED
                  for path in ROOT.glob(pattern))


class UnmarkedBlock(AssertionError):
    """A test read a block whose directive does not say that this test runs it."""


class Document:
    """A Markdown document of the project, read by one test module (``reader``, its
    ``__file__``): its text, and the blocks the reader runs."""

    def __init__(self, relative: str, reader: str) -> None:
        self.name = relative
        self.text = (ROOT / relative).read_text(encoding="utf-8")
        self.reader = Path(reader).resolve().relative_to(ROOT).as_posix()
        self.directed = relative in covered_documents()
        self._blocks = fenced_blocks(self.text, relative)

    def block(self, language: str, *, after: str | None = None, before: str | None = None,
              starting: str = "") -> str:
        """The first block of ``language`` after the text ``after`` (default: from the
        start), before the text ``before`` (default: to the end), that starts with
        ``starting``."""
        chosen = self._select(language, after, before, starting)
        if not chosen:
            raise LookupError(f"{self.name} has no {language} block after {after!r} before "
                              f"{before!r} starting with {starting!r}")
        return self._read(chosen[0])

    def blocks(self, language: str, *, after: str | None = None, before: str | None = None,
               starting: str = "") -> list[str]:
        """Every block :meth:`block` could choose, in order; the reader runs each."""
        return [self._read(block) for block in self._select(language, after, before, starting)]

    def _select(self, language: str, after: str | None, before: str | None,
                starting: str) -> list[Block]:
        first = self._line_of(after) if after is not None else 0
        last = self._line_of(before) if before is not None else len(self.text)
        return [block for block in self._blocks
                if block.language == language and first < block.line < last
                and block.text.startswith(starting)]

    def _line_of(self, marker: str) -> int:
        """The line (from 1) on which the first occurrence of ``marker`` begins."""
        return self.text[:self.text.index(marker)].count("\n") + 1

    def _read(self, block: Block) -> str:
        if self.directed:
            wanted = Directive("run", self.reader)
            if block.directive != wanted:
                raise UnmarkedBlock(
                    f"{block.where}: {self.reader} reads this {block.language or 'plain'} "
                    f"block, but the line above its fence is {block.above!r}; a block a test "
                    f"runs is marked <!-- run: {self.reader} --> there (one module per block)")
            READS.setdefault(self.reader, set()).add((block.document, block.line))
        return block.text


def example_copy(name: str, tmp_path: Path) -> Path:
    """A fresh copy of ``examples/<name>`` at ``tmp_path/examples/<name>`` (without any store
    a developer left in it), beside a ``.venv`` that is the environment the tests run in: a
    checkout, for the commands a document runs from its root or from an example."""
    folder = tmp_path / "examples" / name
    shutil.copytree(ROOT / "examples" / name, folder,
                    ignore=shutil.ignore_patterns(".tarry", "__pycache__"))
    if not (tmp_path / ".venv").exists():
        (tmp_path / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return folder


def fresh_project(folder: Path) -> Path:
    """A new project made in ``folder`` by the real ``tarry init``, as a reader of the guides
    starts one: a document's samples run there, with only what the document says to add."""
    subprocess.run([str(TARRY), "init", str(folder)], capture_output=True, text=True,
                   timeout=60, check=True)
    return folder


def add_config(project: Path, toml: str) -> None:
    """Add a document's ``tarry.toml`` lines to the project's, as a reader edits it: each key
    goes under the table of that name the file already has (``tarry init`` writes all four),
    replacing the line of a key it already sets; a table it lacks is appended."""
    path = project / "tarry.toml"
    lines = path.read_text(encoding="utf-8").splitlines()
    headers = [existing.split("#")[0].strip() for existing in lines]
    at = len(lines)
    for line in toml.splitlines():
        if line.strip().startswith("["):
            table = line.split("#")[0].strip()
            if table not in headers:
                lines.append(table)
                headers.append(table)
            at = headers.index(table) + 1
        elif line.strip():
            key = line.split("=")[0].strip()
            same = next((index for index in range(at, len(lines))
                         if lines[index].split("=")[0].strip() == key
                         or headers[index].startswith("[")), None)
            if same is not None and lines[same].split("=")[0].strip() == key:
                lines[same] = line  # the key tarry init wrote, changed
                continue
            lines.insert(at, line)
            headers.insert(at, "")
            at += 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def add_event_types(project: Path, manifests: str) -> None:
    """Add the event types of a document's ``events:`` block to the project's ``events.yaml``,
    as a reader does: below the entries already under its ``events:`` key."""
    head, _, declared = manifests.partition("events:\n")
    assert not head.strip(), manifests
    path = project / "events.yaml"
    path.write_text(path.read_text(encoding="utf-8") + declared, encoding="utf-8")


def console_commands(block: str) -> list[tuple[str, list[str]]]:
    """A ``console`` block as its ``$ command`` lines, each with the lines shown after it."""
    shown: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            shown.append((line[2:], []))
        else:
            shown[-1][1].append(line)
    return shown


_VARYING = re.compile(r"([0-9a-f]{6,31}…|…|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z|[0-9a-f]{32})")
_PATTERNS = {"…": ".*", "short id": "[0-9a-f]{32}", "id": "[0-9a-f]{32}",
             "instant": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"}


def shown_line(line: str) -> re.Pattern[str]:
    """A line as a document shows it, as a pattern of what a command may print: ``…`` stands
    for anything, and an instant or an id (whole, or cut short as ``f977fd5e…``) for any
    instant or id (they differ on each run)."""
    pieces = []
    for piece in _VARYING.split(line):
        if piece == "…":
            pieces.append(_PATTERNS["…"])
        elif piece.endswith("…"):
            pieces.append(_PATTERNS["short id"])
        elif _VARYING.fullmatch(piece):
            pieces.append(_PATTERNS["id" if "T" not in piece else "instant"])
        else:
            pieces.append(re.escape(piece))
    return re.compile("".join(pieces))


def run_console(block: str, folder: Path, *, env: dict[str, str] | None = None) -> None:
    """Run each ``$ tarry …`` command of a ``console`` block in ``folder`` with the real
    executable, and check that it prints the lines shown after it: standard output, then
    standard error, as a terminal shows them, without the spaces that end a table's lines
    (``…``, instants and ids stand for any)."""
    environment = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    environment.update(env or {})
    for command, shown in console_commands(block):
        assert command.startswith("tarry "), command
        result = subprocess.run(f"{TARRY} {command.removeprefix('tarry ')}", shell=True,
                                cwd=folder, env=environment, capture_output=True, text=True,
                                timeout=60, check=False)
        printed = [line.rstrip() for line in (result.stdout + result.stderr).splitlines()]
        assert len(printed) == len(shown), (command, result.stdout, result.stderr)
        for line, expected in zip(printed, shown, strict=True):
            assert shown_line(expected).fullmatch(line), (command, line, expected)


def shell(command: str, cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``command`` run by bash in ``cwd``, with the test environment's ``tarry`` on the PATH
    (as a document's ``sh`` block runs once tarry is installed)."""
    env = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    env["PATH"] = f"{TARRY.parent}{os.pathsep}{env['PATH']}"
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, check=False, **kwargs)


def run_status(folder: Path, run_id: str) -> str:
    """The status ``tarry show --json`` gives the run, in the project at ``folder``."""
    shown = subprocess.run([str(TARRY), "show", run_id, "--json"], cwd=folder,
                           capture_output=True, text=True, timeout=60, check=True)
    status: str = json.loads(shown.stdout)["status"]
    return status

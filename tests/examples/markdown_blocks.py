"""Reading the fenced code blocks of the project's Markdown documents, to test what they show."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["ROOT", "block_after", "blocks", "console_commands", "shown_line"]

ROOT = Path(__file__).resolve().parents[2]
"""The repository root."""

_FENCED = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_VARYING = re.compile(r"([0-9a-f]{6,31}…|…|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z|[0-9a-f]{32})")
_PATTERNS = {"…": ".*", "short id": "[0-9a-f]{32}", "id": "[0-9a-f]{32}",
             "instant": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"}


def blocks(text: str, language: str) -> list[str]:
    """The fenced blocks of ``language`` in the Markdown ``text``, in order."""
    return [str(body) for lang, body in _FENCED.findall(text) if lang == language]


def block_after(text: str, marker: str, language: str) -> str:
    """The first fenced block of ``language`` that follows ``marker`` in ``text``."""
    return blocks(text[text.index(marker):], language)[0]


def console_commands(block: str) -> list[tuple[str, list[str]]]:
    """A ``console`` block as its ``$ command`` lines, each with the lines shown after it."""
    shown: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            shown.append((line[2:], []))
        else:
            shown[-1][1].append(line)
    return shown


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

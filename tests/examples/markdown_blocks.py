"""Reading the fenced code blocks of the project's Markdown documents, to test what they show."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["ROOT", "block_after", "blocks"]

ROOT = Path(__file__).resolve().parents[2]
"""The repository root."""

_FENCED = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks(text: str, language: str) -> list[str]:
    """The fenced blocks of ``language`` in the Markdown ``text``, in order."""
    return [str(body) for lang, body in _FENCED.findall(text) if lang == language]


def block_after(text: str, marker: str, language: str) -> str:
    """The first fenced block of ``language`` that follows ``marker`` in ``text``."""
    return blocks(text[text.index(marker):], language)[0]

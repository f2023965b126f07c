"""Users never see the product specification, so nothing they read cites it: no help text,
error message or docstring of the package, and no guide, names it or its sections."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from markdown_blocks import ROOT

CITATION = re.compile(r"\bSPEC\b|SPEC\.md|\b[Ss]ection \d+(\.\d+)*\b|§ ?\d")
"""A reference to the specification: its name, or a numbered section of it."""

READ_BY_USERS = [*sorted(path for path in (ROOT / "src").rglob("*.*")
                         if "__pycache__" not in path.parts),
                 *sorted((ROOT / "docs").glob("*.md"))]
"""The package's files (code, queries, templates, scaffold) and the guides."""


def citations(path: Path) -> list[str]:
    """``file:line: text`` of each line of ``path`` that cites the specification."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:  # a binary file carries no prose
        return []
    return [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
            for number, line in enumerate(lines, 1) if CITATION.search(line)]


def test_nothing_users_read_cites_the_specification() -> None:
    assert len(READ_BY_USERS) > 100
    assert [found for path in READ_BY_USERS for found in citations(path)] == []


@pytest.mark.parametrize("line", ["the run document (SPEC 8.1)", "see SPEC.md",
                                  "held runs (section 5)", "as § 3.5 says"])
def test_a_citation_is_recognised(line: str) -> None:
    assert CITATION.search(line)


def test_words_that_merely_resemble_one_are_not_citations() -> None:
    assert not CITATION.search("spec = _SCHEMES[scheme]; the sections of a page")

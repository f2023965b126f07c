"""What the documents may not hold: citations of the product's internal specification, dated
measurements in the design page, and a benchmark page longer than a reader reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from markdown_blocks import ROOT

DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"),
                    *(ROOT / "bench").glob("*.md")])
SPEC_CITATION = re.compile(r"\bSPEC\b|\bspecification section\b|§ ?\d", re.IGNORECASE)
_MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|"
           "December")
DATED = re.compile(rf"\b\d{{1,2}} ({_MONTHS})\b|\b({_MONTHS}) \d{{1,2}}\b|\b20\d\d-\d\d-\d\d\b"
                   rf"|\b({_MONTHS}) 20\d\d\b")
MEASURED = re.compile(r"\b\d[\d,.]* ?(tx/s|wakes/s|starts/s|events/s|delivered/s)\b"
                      r"|\b\d+\.\d+ ?MiB\b|\bp99 (went|was|of) \d|\bmeasured on\b")
BENCH_README_LIMIT = 25_000
"""Characters: per benchmark what it measures, how to run it, and its latest table."""


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_document_cites_the_specification(document: Path) -> None:
    text = document.read_text(encoding="utf-8")
    cited = [f"{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1)
             if SPEC_CITATION.search(line)]
    assert cited == []


def test_the_architecture_page_holds_no_dated_measurement() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    found = [f"{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1)
             if DATED.search(line) or MEASURED.search(line)]
    assert found == []


def test_the_checks_see_a_citation_a_date_and_a_measurement() -> None:
    assert SPEC_CITATION.search("as SPEC 3.8 says")
    assert DATED.search("measured on 6 December, 12:06")
    assert DATED.search("(2026-12-06)")
    assert MEASURED.search("an idle worker held 47.9 MiB")
    assert MEASURED.search("1,709 tx/s")
    assert not DATED.search("a 50 ms look-ahead")
    assert not MEASURED.search("every 50 µs at first and at most every 1 ms")
    assert not MEASURED.search("a 1 MiB payload of 40,000 keys")


def test_the_benchmarks_page_stays_short() -> None:
    assert len((ROOT / "bench" / "README.md").read_text(encoding="utf-8")) < BENCH_README_LIMIT


def test_the_benchmarks_page_describes_every_benchmark() -> None:
    text = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    scripts = sorted(path.relative_to(ROOT / "bench").as_posix()
                     for path in [*(ROOT / "bench").glob("*.py"),
                                  *(ROOT / "bench" / "peers").glob("*.py")]
                     if "\ndef main(" in path.read_text(encoding="utf-8"))
    assert "timers.py" in scripts
    assert [script for script in scripts if f"`{script}`" not in text] == []

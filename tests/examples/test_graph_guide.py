"""docs/flows.md's ``tarry graph`` session runs as printed, in a copy of examples/waiting."""

from __future__ import annotations

from pathlib import Path

from markdown_blocks import Document, example_copy, run_console

REFERENCE = Document("docs/flows.md", __file__)
SESSION = REFERENCE.block("console", after="## Drawing a flow: `tarry graph`")


def test_the_mermaid_of_hello_is_as_printed(tmp_path: Path) -> None:
    run_console(SESSION, example_copy("waiting", tmp_path))

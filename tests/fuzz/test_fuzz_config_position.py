"""Fuzzing where ``tarry validate`` places an ``[actions]`` entry it cannot import: any text of
a ``tarry.toml`` and any key give a line and a column inside that text, never an error."""

from __future__ import annotations

from fuzz_support import fuzz
from hypothesis import example, given
from hypothesis import strategies as st

from tarry.cli.project import _entry_position

TOML_PIECES = st.sampled_from(["[actions]", "[tarry]", "[checks]", "\n", " ", "=", '"', "'",
                               "slack.post", "note", "#", "[", "]", "x = 1", "\t", "\r\n"])


@fuzz(300)
@given(text=st.one_of(st.text(), st.lists(TOML_PIECES).map("".join)),
       key=st.one_of(st.text(), st.sampled_from(["slack.post", "note", "", ".*", "\\1"])))
@example(text='[actions]\n  "slack.post" = "x:y"\n', key="slack.post")
@example(text="[actions\nnote=1", key="note")
@example(text="[" * 10_000, key="[")
def test_any_text_and_key_give_a_position_inside_the_text(text: str, key: str) -> None:
    line, column = _entry_position(text, "actions", key)
    lines = text.splitlines() or [""]
    assert 1 <= line <= len(lines)
    assert 1 <= column <= len(lines[line - 1]) + 1

"""Close-match suggestions for misspelled names ("did you mean …?")."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest candidate, or ``""`` when none is close."""
    close = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""

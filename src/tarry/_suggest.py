"""Close-match suggestions for misspelled names ("did you mean …?")."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from itertools import islice

__all__ = ["did_you_mean"]


_LONGEST_WORD = 100
"""A longer word is no misspelling of a name (and comparing it costs its length squared)."""
_MOST_CANDIDATES = 1_000
"""How many candidates are compared at most (an event's data may have a million keys)."""


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest candidate, or ``""`` when none is close
    (or when ``word`` is too long to be a misspelling; only the first
    :data:`_MOST_CANDIDATES` candidates are compared, each of them up to that length)."""
    if len(word) > _LONGEST_WORD:
        return ""
    names = {name for name in islice(candidates, _MOST_CANDIDATES) if len(name) <= _LONGEST_WORD}
    close = difflib.get_close_matches(word, sorted(names), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""

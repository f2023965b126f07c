"""``ctx.patched`` and ``ctx.deprecate_patch``: changing a flow's code while runs wait.

A run replays its flow from the top on each resume, so code that changes what it calls
before the point a waiting run reached breaks that run (``nondeterminism``). A patch keeps
both versions side by side: ``if ctx.patched("new-tax"): <new code> else: <old code>``. The
answer for one run, and the marker it records (a place in the journal's order, kind
``patch``, name ``#patch:<id>``), follow Temporal's ``workflow.patched``:

- the run recorded the marker at this place: True (the run took the new code);
- the run recorded the marker for this id elsewhere (a branch that finished, say): True;
- the run recorded another operation at this place (it went past this point before the
  patch existed): False, and nothing is recorded;
- the run recorded nothing at this place yet (this is new code for it): the marker is
  recorded and the answer is True.

Every later call with the same id in the same run returns the first answer. Once no run
recorded before the patch remains, ``ctx.deprecate_patch("new-tax")`` replaces the test (the
old code goes): it accepts the marker where a run recorded one and records nothing, so a run
that ran it replays the same once the call itself is removed. A run that was found without
the patch and then reaches ``deprecate_patch`` of the same id is nondeterminism.
"""

from __future__ import annotations

import re

from tarry.errors import NondeterminismError
from tarry.sdk.replay import PATCH, PATCH_PREFIX, Scope, describe

__all__ = ["checked_patch_id", "deprecate_patch", "patched"]

_PATCH_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


def checked_patch_id(patch_id: object, call: str) -> str:
    """``patch_id`` if it is a well-formed patch id; TypeError or ValueError naming
    ``call`` (``ctx.patched``) otherwise."""
    if not isinstance(patch_id, str):
        raise TypeError(f"{call} needs a patch id (a string), got {type(patch_id).__name__}")
    if not _PATCH_ID.fullmatch(patch_id):
        raise ValueError(f"{call}: patch id {patch_id!r} is invalid: use 1 to 100 letters, "
                         "digits, '.', '_' or '-', beginning with a letter or digit, such as "
                         "'new-tax-rule'")
    return patch_id


def patched(scope: Scope, patch_id: str) -> bool:
    """Whether the run takes the code of patch ``patch_id`` (see the module docstring)."""
    marker = PATCH_PREFIX + checked_patch_id(patch_id, "ctx.patched")
    scope.ready(PATCH, marker)
    journal = scope.journal
    here = scope.recorded_here() == (PATCH, marker)
    if here:
        scope.skip()
    decided = journal.patches.get(patch_id)
    if decided is not None:  # False only for a run with no marker of it anywhere
        return decided
    if here or marker in set(journal.recorded_kinds(PATCH)):
        answer = True
    elif scope.recorded_here() is not None:
        answer = False
    else:
        scope.mark(PATCH, marker).record({})
        answer = True
    journal.patches[patch_id] = answer
    return answer


def deprecate_patch(scope: Scope, patch_id: str) -> None:
    """Accept the marker of ``patch_id`` where the run recorded one; record nothing."""
    marker = PATCH_PREFIX + checked_patch_id(patch_id, "ctx.deprecate_patch")
    scope.ready(PATCH, marker)
    if scope.journal.patches.get(patch_id) is False:
        raise _broken(scope, patch_id, (
            f"{scope.label}: the run was recorded before {describe(PATCH, marker)} "
            f"(ctx.patched({patch_id!r}) is False for it), but the code now calls "
            f"ctx.deprecate_patch for it; keep ctx.patched({patch_id!r}) and the old code until "
            "no such run remains (tarry replay finds them)"))
    if scope.recorded_here() == (PATCH, marker):
        scope.skip()
    scope.journal.patches[patch_id] = True


def _broken(scope: Scope, patch_id: str, message: str) -> NondeterminismError:
    """The error for a run whose answer for patch ``patch_id`` conflicts with what it
    recorded; the run fails with it whatever the flow does."""
    marker = PATCH_PREFIX + patch_id
    error = NondeterminismError(message, operation=scope.prefix + marker, recorded=None,
                                requested=describe(PATCH, marker))
    if scope.journal.broken is None:
        scope.journal.broken = error
    return error

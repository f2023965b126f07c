"""Building a new run: its id, its first record and its ``created`` history entry.

Shared by every way a run starts (``Engine.start``, ``start_many``, triggers), so that a run
is the same whoever asked for it.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from tarry._text import clip
from tarry.errors import InvalidRunRequest
from tarry.language.inputs import bind_inputs
from tarry.language.model import Flow
from tarry.model import CREATED, EncodedJSON, HistoryEntry, NewRun, RunStatus
from tarry.values import ValueLimits, check_key, check_value

__all__ = ["checked_target", "new_run_id", "pending_run"]


def new_run_id() -> str:
    """A fresh run id, unique across machines: 128 random bits, as 32 hex digits."""
    return secrets.token_hex(16)


def pending_run(flow: Flow, inputs: Mapping[str, Any] | None, target: str | None,
                now: datetime, *, run_id: str, limits: ValueLimits,
                origin: Mapping[str, Any] | None = None,
                rerun_of: str | None = None,
                continued_from: str | None = None) -> tuple[NewRun, HistoryEntry]:
    """A pending run of ``flow`` due ``now``, its inputs and target checked (``RunError``
    when they do not fit, ``InvalidValue`` when they are not portable or beyond ``limits``),
    and its ``created`` entry (with the target and ``origin``, what started it: a rerun's
    names the run it reruns, ``rerun_of``; a successor the run that continued as it,
    ``continued_from``)."""
    bound = bind_inputs(flow, inputs or {})
    encoded = EncodedJSON(check_value(bound, "the run's inputs", limits.value_bytes))
    if target is not None:
        check_key(target, "the run's target", limits.key_bytes)
    run = NewRun(id=run_id, flow=flow.name, flow_digest=flow.digest, status=RunStatus.PENDING,
                 inputs=bound, target=checked_target(target), created_at=now, due_at=now,
                 inputs_json=encoded, rerun_of=rerun_of, continued_from=continued_from)
    details = {**({"target": target} if target else {}), **(origin or {}),
               **({"rerun_of": rerun_of} if rerun_of else {}),
               **({"continued_from": continued_from} if continued_from else {})}
    return run, HistoryEntry(now, CREATED, None, details)


def checked_target(target: str | None) -> str | None:
    """``target`` itself, refused when a check could misread it as its argument: empty (the
    check would get the run id instead) or beginning with ``-`` (an option to the script)."""
    if target is None:
        return None
    if not target:
        raise InvalidRunRequest("a run's target must not be empty; leave the target out for "
                                "a run without one")
    if target.startswith("-"):
        raise InvalidRunRequest(f"a run's target must not begin with '-' (a check script "
                                f"would read it as an option): {clip(target)!r}")
    return target

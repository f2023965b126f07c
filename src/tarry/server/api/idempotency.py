"""``Idempotency-Key`` on ``POST /v1/runs``: a retried start returns the run the first
attempt created.

The key (per principal) is reserved with the new run's id before the run is created, in its
own durable transaction; a retry finds it and answers with that run — or creates the run
under that id, when the first attempt was cut off between the two. A key reused with a
different request is a 409: a client bug that would otherwise start the wrong run silently.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated

from fastapi import Header

from tarry.engine.runtime import Engine, new_run_id
from tarry.errors import RunNotFound, StoreError
from tarry.model import RunRecord
from tarry.server.api.models import StartRun
from tarry.server.errors import ApiError

__all__ = ["IdempotencyKey", "check_key", "fingerprint", "start_once"]

_KEY = re.compile(r"[\x21-\x7e]{1,255}")

IdempotencyKey = Annotated[str | None, Header(
    alias="Idempotency-Key", description="Makes a retried request safe: the same key returns "
                                         "what the first request with it did (1–255 "
                                         "printable ASCII characters, no spaces).",
    json_schema_extra={"pattern": f"^{_KEY.pattern}$"})]
"""The header (a key that breaks its pattern is a 400 from :func:`check_key`)."""


def check_key(key: str | None) -> str | None:
    """``key`` if it is well-formed (or absent); else a 400."""
    if key is not None and not _KEY.fullmatch(key):
        raise ApiError(400, "the Idempotency-Key header must be 1–255 printable ASCII "
                            "characters without spaces")
    return key


def fingerprint(body: StartRun) -> str:
    """The digest of a start request, to recognise a key reused for another request."""
    text = json.dumps(body.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def start_once(engine: Engine, principal: str, key: str,
               body: StartRun) -> tuple[RunRecord, bool]:
    """The run the key stands for, created now unless an earlier request created it; and
    whether an earlier request did."""
    digest = fingerprint(body)
    fresh = new_run_id()
    run_id, stored = engine.store.reserve_idempotency_key(principal, key, digest, fresh,
                                                          engine.clock.now())
    if stored != digest:
        raise ApiError(409, f"the Idempotency-Key {key!r} was first used with a different "
                            "request; use a new key for a new start",
                       details={"idempotency_key": key, "run_id": run_id})
    existing = None if run_id == fresh else _existing(engine, run_id)
    if existing is not None:
        return existing, True
    try:
        return _start(engine, body, run_id), False
    except StoreError:  # a concurrent retry created the run first: answer with that run
        existing = _existing(engine, run_id)
        if existing is None:
            raise
        return existing, True


def _start(engine: Engine, body: StartRun, run_id: str) -> RunRecord:
    """Start the run ``body`` asks for, under the id its key reserved."""
    return engine.start(body.flow, body.inputs, target=body.target,
                        hold_after=body.hold_after, run_id=run_id, by_name=True)


def _existing(engine: Engine, run_id: str) -> RunRecord | None:
    try:
        return engine.store.get_run(run_id)
    except RunNotFound:
        return None

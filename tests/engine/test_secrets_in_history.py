"""An action's error text that carries a secret is masked before it reaches the run's history,
its error and the store, on both stores: the API tokens, an event type's signing secret and
the database password."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext
from tarry.model import RunStatus
from tarry.testing import Harness

SECRETS = {"TARRY_API_TOKEN": "tok-single-123", "TARRY_API_TOKENS": "ops=tok-ops-456",
           "SLACK_SIGNING_SECRET": "slack-signing-789",
           "TARRY_DATABASE": "postgresql://ada:db-pass-000@db.example/tarry"}
MANIFESTS = """\
events:
  slack.approval:
    correlate_on: [message]
    secret_env: SLACK_SIGNING_SECRET
"""
FLOW = """\
flow: leaky
steps:
  - call:
      leaky: {}
      retry: { max: 1, every: 1s }
"""


def leaky(args: dict[str, Any], ctx: ActionContext) -> None:
    """A user action whose exception quotes every secret it was given."""
    raise PermissionError("refused: " + ", ".join(SECRETS.values()))


@pytest.fixture
def harness(tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[Harness]:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    h = Harness(tmp_path, actions={"leaky": leaky}, manifests=MANIFESTS, store_url=store_url)
    yield h
    h.close()


async def test_an_action_error_carrying_secrets_is_stored_masked(harness: Harness) -> None:
    run_id = harness.start(harness.flow(FLOW))
    await harness.run_until_idle()
    record = harness.record(run_id)
    assert record.status is RunStatus.FAILED
    masked = ("PermissionError: refused: ***, ops=***, ***, "
              "postgresql://ada:***@db.example/tarry")
    assert record.error == {"type": "action-error", "step": "call", "message": masked}
    stored = json.dumps(harness.document(run_id))
    assert [secret for secret in ("tok-single-123", "tok-ops-456", "slack-signing-789",
                                  "db-pass-000") if secret in stored] == []
    assert stored.count(masked) >= 2  # the retry's entry and the failure's, at least

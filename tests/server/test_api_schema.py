"""A bounded property-based run against the live server (schemathesis, its command line, on
loopback): every operation of /openapi.json, in every phase, with every check but one. Any 5xx,
any status, header, content type or body that the document does not declare, invalid input
accepted, a 405 whose ``Allow`` differs from the document, a call that skips the token and is
answered, fails the test with schemathesis's report.

The one check left out, ``positive_data_acceptance``, wants every request that fits the
document answered 2xx; a well-formed ``cursor`` this server never gave out, or a start of a
flow with inputs it does not declare, is refused (400, 422) as documented.

The server has a token, and a signed event type beside the plain ones, so that both ways of
sending an event are exercised. Budget: a fixed seed and ``MAX_EXAMPLES`` per operation keep
one run (on one store) to some 15 seconds. A deeper hunt: ``TARRY_TEST_FUZZ=deep``
multiplies the examples by 50.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from server_support import EVENTS, serve, write_project

DEPTH = 50 if os.environ.get("TARRY_TEST_FUZZ") == "deep" else 1
MAX_EXAMPLES = 10 * DEPTH
"""Examples per operation and phase: enough to cross every parameter's edges, few enough
for every run of the suite."""
TIMEOUT = 300 * DEPTH
"""Seconds the run may take at most (it takes some 15 at the default depth)."""

TOKEN = "schemathesis-token"

CONFIG = f"""\
[auth.openapi.HTTPBearer]
bearer = "{TOKEN}"

[dictionaries.flows]
values = ["approval", "nap", "quick"]

[dictionaries.types]
values = ["deal.approved", "github.push"]

[dictionaries.deals]
values = ["d1", "d2"]

[parameters]
"body.flow" = {{ dictionary = "flows", probability = 0.7 }}
"path.event" = {{ dictionary = "types", probability = 0.5 }}
"body.data.deal" = {{ dictionary = "deals", probability = 0.7 }}
"body.inputs.deal" = {{ dictionary = "deals", probability = 0.7 }}
"""
"""Real names of the test project, so that runs start and events are delivered (the
stateful phase then reads, cancels, redelivers what it created), and the token."""

SIGNED = EVENTS + """\
  github.push:
    correlate_on: [ref]
    secret_env: GITHUB_SECRET
    signature: github
"""
"""The test project's manifests and a signed type (its unsigned deliveries are 401s)."""


def schemathesis(url: str, config: Path) -> subprocess.CompletedProcess[str]:
    """``st run`` against the server at ``url``: its exit status and report."""
    command = [sys.executable, "-m", "schemathesis.cli", "--no-color", "--config-file",
               str(config), "run", f"{url}/openapi.json", "--checks", "all",
               "--exclude-checks", "positive_data_acceptance", "--max-examples",
               str(MAX_EXAMPLES), "--seed", "42", "--workers", "1", "--request-timeout", "10"]
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT,
                          check=False, cwd=config.parent)


@pytest.mark.timeout(TIMEOUT)
def test_no_call_gets_a_5xx_or_a_response_outside_the_document(tmp_path: Path,
                                                                 store_url: str) -> None:
    project = write_project(tmp_path / "project", store_url, events=SIGNED)
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG)
    with serve(project, {"TARRY_API_TOKEN": TOKEN, "GITHUB_SECRET": "s3cret"}) as server:
        run = schemathesis(server.url, config)
    assert run.returncode == 0, run.stdout[-20000:] + run.stderr[-5000:]

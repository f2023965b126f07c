"""docs/serve.md says what the server does: its commands serve as printed, its error shape and
webhook manifests are the server's, its tables of errors, metrics and client methods are the
code's own."""

from __future__ import annotations

import inspect
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from markdown_blocks import TARRY, Document, fresh_project
from tarry import Client
from tarry.language.loader import parse_flow
from tarry.language.manifests import parse_manifests
from tarry.server.errors import ERROR_TYPES
from tarry.server.metrics import Metrics
from tarry.store.sqlite import SQLiteStore

DOC = Document("docs/serve.md", __file__)
GUIDE = DOC.text
COMMANDS = DOC.block("sh")
ERROR = DOC.block("json", after="**Errors** have one shape")
GITHUB = DOC.block("yaml", after="### GitHub, step by step")
SLACK = DOC.block("yaml", after="### Slack, step by step")


def _rows(first_cell: str) -> list[list[str]]:
    """The rows of the guide's tables whose first cell matches ``first_cell``."""
    return [[cell.strip() for cell in line.strip("|").split("|")]
            for line in GUIDE.splitlines() if re.match(rf"^\| {first_cell}", line)]


def test_every_error_status_in_the_guide_has_the_type_the_server_answers_with() -> None:
    rows = _rows(r"\d{3} ")
    assert {int(row[0]): row[1].strip("`") for row in rows} == {
        status: kind for status, kind in ERROR_TYPES.items() if status not in (405, 500)}


def test_the_metrics_in_the_guide_are_the_ones_exposed(tmp_path: Path) -> None:
    documented = {name for row in _rows("`tarry_")
                  for name in re.findall(r"`(tarry_\w+)", row[0])}
    store = SQLiteStore(tmp_path / "m.db")
    store.migrate()
    exposed = {metric.name + ("_total" if metric.type == "counter" else "")
               for metric in Metrics(store).registry.collect()}
    store.close()
    assert documented == exposed


def test_the_client_table_lists_every_public_method() -> None:
    documented = {row[0].strip("`").split("(")[0] for row in _rows("`[a-z_]+\\(")}
    methods = {name for name, _ in inspect.getmembers(Client, inspect.isfunction)
               if not name.startswith("_") and name != "close"}
    assert documented == methods


# --- the commands, the error shape, the webhook manifests -------------------------------------

def served(root: Path, command: str, address: str) -> tuple[dict[str, Any], str]:
    """Run the guide's token line and then ``command`` (a ``tarry serve`` line) in ``root``
    with bash; once ``address`` answers, ask it for run ``r1`` with the token and without,
    stop the server with SIGTERM, and give the error document and what it logged."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("TARRY_")}
    env["PATH"] = f"{TARRY.parent}{os.pathsep}{env['PATH']}"
    script = f'{COMMANDS.splitlines()[0]}\necho "$TARRY_API_TOKEN" > token\nexec {command}'
    with subprocess.Popen(["bash", "-c", script], cwd=root, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        try:
            answered = _first_answer(address, process)
            token = (root / "token").read_text(encoding="utf-8").strip()
            with httpx.Client(base_url=address, timeout=10) as client:
                assert client.get("/v1/runs/r1").status_code == 401
                missing = client.get("/v1/runs/r1", headers={"Authorization": f"Bearer {token}"})
        finally:
            process.send_signal(signal.SIGTERM)
            _, logged = process.communicate(timeout=60)
    assert answered, logged
    assert process.returncode == 0, logged
    assert missing.status_code == 404
    return missing.json(), logged


def _first_answer(address: str, process: subprocess.Popen[str]) -> bool:
    """Whether the server at ``address`` answers ``/healthz`` before its process ends (or a
    minute passes)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            return httpx.get(f"{address}/healthz", timeout=1).status_code == 200
        except httpx.TransportError:
            time.sleep(0.1)  # the process is starting: a real server on a real socket
    return False


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_the_serve_commands_serve_with_a_token_on_their_addresses(tmp_path: Path) -> None:
    root = fresh_project(tmp_path / "p")
    _, first, second = COMMANDS.splitlines()
    error, _ = served(root, first, "http://127.0.0.1:8620")
    assert error == json.loads(ERROR)
    _, logged = served(root, second, "http://127.0.0.1:8080")
    assert all(json.loads(line)["level"] for line in logged.splitlines())


def test_the_webhook_manifests_declare_signed_types() -> None:
    github = parse_manifests(GITHUB, "events.yaml")["github.pull_request"]
    slack = parse_manifests(SLACK, "events.yaml")["slack.approval"]
    assert (github.correlate_on, github.secret_env, github.signature) == (
        ("number",), "GITHUB_WEBHOOK_SECRET", "github")
    assert (slack.correlate_on, slack.secret_env, slack.signature) == (
        ("message",), "SLACK_SIGNING_SECRET", "slack")
    assert slack.path_of("message") == ("container", "message_ts")
    flow = parse_flow('flow: review\ninputs:\n  pr: {}\nsteps:\n  - merged:\n'
                      '      wait_for: github.pull_request\n      match: { number: "{{ pr }}" }\n'
                      "      timeout: 7d\n", "review.yaml",
                      manifests=parse_manifests(GITHUB, "events.yaml"))
    assert flow.name == "review"

"""``tarry serve`` as a real process: it serves, and SIGTERM drains the server and the
worker before it exits 0."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from server_support import status_becomes

pytestmark = pytest.mark.slow


def test_sigterm_drains_the_server_and_its_worker_and_exits_0(project: Path) -> None:
    tarry = Path(sys.executable).with_name("tarry")
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith("TARRY_") or name.startswith("TARRY_TEST")}
    with subprocess.Popen([str(tarry), "serve", "--port", "0", "--log-format", "json"],
                          cwd=project, stderr=subprocess.PIPE, text=True,
                          env=environment) as process:
        messages = _serve_then_stop(process)
    assert process.returncode == 0
    assert any('"message": "worker ' in line and 'stopped"' in line for line in messages)


def _serve_then_stop(process: subprocess.Popen[str]) -> list[str]:
    """Start and finish a run over HTTP, then SIGTERM; the JSON log lines."""
    assert process.stderr is not None
    lines: list[str] = []
    for line in process.stderr:
        lines.append(line)
        found = re.search(r"running on (http://127\.0\.0\.1:\d+)", line)
        if found:
            break
    else:
        pytest.fail("tarry serve did not start: " + "".join(lines))
    rest: list[str] = []
    reader = threading.Thread(target=lambda: rest.extend(process.stderr or []))
    reader.start()
    with httpx.Client(base_url=found.group(1), timeout=10) as client:
        run_id = client.post("/v1/runs", json={"flow": "quick"}).json()["id"]
        assert status_becomes(client, run_id, "succeeded")
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=60)
    reader.join()
    return [line for line in lines + rest if line.startswith("{")]

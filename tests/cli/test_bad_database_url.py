"""A PostgreSQL URL that cannot work fails at once, with one line that says why.

Before, the connection pool retried in the background for the whole ``pool_timeout`` (10 s)
and logged each failed attempt: eight copies of the same error, then the error itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from backends import PostgresServer

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

TARRY = Path(sys.executable).parent / "tarry"

PATIENCE = 60
"""``pool_timeout`` given in the URL: a command that waited for it would take this long."""


def _tarry(folder: Path, *args: str,
           url: str = "sqlite:///tarry.db") -> tuple[subprocess.CompletedProcess[str], float]:
    environment = {**os.environ, "TARRY_DATABASE": url}
    began = time.monotonic()
    result = subprocess.run([str(TARRY), *args], check=False, capture_output=True, text=True,
                            env=environment, cwd=folder, timeout=PATIENCE * 3)
    return result, time.monotonic() - began


def _with(url: str, *, netloc: str | None = None, path: str | None = None) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=netloc or parts.netloc, path=path or parts.path))


@pytest.mark.parametrize(("case", "reason"), [
    ("missing database", 'FATAL: database "tarry_no_such_database" does not exist'),
    ("refused connection", "Connection refused"),
    ("unknown user", 'FATAL: role "tarry_no_such_user" does not exist'),
])
def test_a_bad_postgres_url_fails_at_once_with_one_line(
        postgres_server: PostgresServer, tmp_path: Path, case: str, reason: str) -> None:
    server = postgres_server.url
    host = urlsplit(server).hostname
    url = {"missing database": _with(server, path="/tarry_no_such_database"),
           "refused connection": _with(server, netloc=f"{host}:1"),
           "unknown user": _with(server, netloc=f"tarry_no_such_user@{host}:"
                                              f"{urlsplit(server).port}")}[case]
    _, starting = _tarry(tmp_path, "runs")  # what starting tarry costs on this machine now
    result, seconds = _tarry(tmp_path, "runs", url=f"{url}?pool_timeout={PATIENCE}")
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: PostgreSQL store unavailable: connection to server at ")
    assert reason in lines[0]
    assert seconds - starting < PATIENCE / 2, "it waited for the pool timeout"

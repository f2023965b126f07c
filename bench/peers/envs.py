"""The peers' virtual environments and the services they need, for ``run.py``.

- :func:`ensure_env` builds (or reuses) one virtual environment per ``pins.toml`` section
  under the scratch folder and installs that section's packages from PyPI with pip;
- :func:`ensure_redis` starts Redis on loopback when it is not up (and says whether it did);
- :func:`postgres_reachable` says why PostgreSQL cannot be used, if it cannot.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import psycopg

PINS = Path(__file__).with_name("pins.toml")
INSTALL_TIMEOUT = 1200.0
REDIS_START = ["redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "--port", "6379",
               "--save", "", "--appendonly", "no"]
REDIS_WAIT = 10.0


def pins(path: Path = PINS) -> dict[str, list[str]]:
    """Each section's pip requirement specifiers."""
    with path.open("rb") as handle:
        return {name: list(section["packages"]) for name, section in tomllib.load(handle).items()}


@dataclass
class Env:
    """A virtual environment with one section's packages, or why there is none."""

    name: str
    python: Path | None
    packages: list[str]
    freeze: list[str] = field(default_factory=list)
    """``pip freeze`` of the environment: what actually ran."""
    reused: bool = False
    problem: str | None = None

    def document(self) -> dict[str, object]:
        """The environment as JSON."""
        return {"packages": self.packages, "freeze": self.freeze, "reused": self.reused,
                "problem": self.problem}


def ensure_env(name: str, packages: list[str], scratch: Path) -> Env:
    """The environment ``scratch/venvs/<name>`` with ``packages`` installed, reused when a
    previous run installed exactly these; a failed install is reported, never raised."""
    folder = scratch / "venvs" / name
    python = folder / "bin" / "python"
    marker = folder / "pins.txt"
    wanted = "\n".join(packages) + "\n"
    reused = python.exists() and marker.exists() and marker.read_text("utf-8") == wanted
    if not reused:
        problem = _install(folder, packages)
        if problem is not None:
            return Env(name, None, packages, problem=problem)
        marker.write_text(wanted, encoding="utf-8")
    freeze = subprocess.run([str(python), "-m", "pip", "freeze", "--all"], capture_output=True,
                            text=True, check=False).stdout.split()
    return Env(name, python, packages, freeze=freeze, reused=reused)


def _install(folder: Path, packages: list[str]) -> str | None:
    """Create the environment afresh and install ``packages``; the error, if any."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    steps = [[sys.executable, "-m", "venv", str(folder)],
             [str(folder / "bin" / "python"), "-m", "pip", "install", "-q",
              "--disable-pip-version-check", *packages]]
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, check=False,
                                  timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            return f"{' '.join(step[:4])}… timed out after {INSTALL_TIMEOUT:.0f}s"
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-5:])
            return f"{' '.join(step[:4])}… failed ({done.returncode}): {tail}"
    return None


def redis_up(url: str) -> bool:
    """Whether a Redis server answers at ``url``."""
    parts = urlsplit(url)
    try:
        done = subprocess.run(["redis-cli", "-h", parts.hostname or "127.0.0.1",
                               "-p", str(parts.port or 6379), "ping"],
                              capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.stdout.strip() == "PONG"


def ensure_redis(url: str) -> tuple[bool, str | None]:
    """(whether this call started Redis, why Redis is unusable if it is)."""
    if redis_up(url):
        return False, None
    if shutil.which("redis-server") is None:
        return False, "redis-server is not installed (apt-get install redis-server)"
    subprocess.run(REDIS_START, capture_output=True, check=False)
    deadline = time.monotonic() + REDIS_WAIT
    while not redis_up(url):
        if time.monotonic() > deadline:
            return True, f"redis-server did not answer within {REDIS_WAIT:.0f}s"
        time.sleep(0.1)
    return True, None


def redis_command(url: str, *args: str) -> str:
    """One redis-cli command against the database ``url`` names; its output."""
    parts = urlsplit(url)
    database = parts.path.strip("/") or "0"
    done = subprocess.run(["redis-cli", "-h", parts.hostname or "127.0.0.1",
                           "-p", str(parts.port or 6379), "-n", database, *args],
                          capture_output=True, text=True, timeout=30, check=True)
    return done.stdout.strip()


def postgres_problem(url: str) -> str | None:
    """Why the PostgreSQL server at ``url`` cannot host scratch databases, if it cannot."""
    try:
        with psycopg.connect(url, connect_timeout=5) as connection:
            connection.execute("SELECT 1")
    except psycopg.Error as error:
        return f"PostgreSQL at {url} is not reachable: {error}"
    return None

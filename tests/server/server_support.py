"""A tarry project served over a real socket: uvicorn on 127.0.0.1, a free port, a thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn

from tarry.config import Settings, load_settings
from tarry.engine.runtime import Engine
from tarry.server.app import create_app

APPROVAL_FLOW = """\
flow: approval
inputs:
  deal: { type: string, required: true }
steps:
  - approval:
      wait_for: deal.approved
      match: { deal: "{{ deal }}" }
      timeout: 1d
  - decided:
      exit: decided
"""

NAP_FLOW = """\
flow: nap
steps:
  - nap:
      wait: { for: 2d }
"""

QUICK_FLOW = """\
flow: quick
steps:
  - hello:
      set: { text: hi }
"""

EVENTS = """\
events:
  deal.approved:
    correlate_on: [deal]
    schema:
      type: object
      required: [deal, approved]
      properties:
        deal: { type: string }
        approved: { type: boolean }
    buffer: 10m
"""

FLOWS = {"approval": APPROVAL_FLOW, "nap": NAP_FLOW, "quick": QUICK_FLOW}


def write_project(root: Path, store_url: str, *, events: str = EVENTS,
                  flows: Mapping[str, str] = FLOWS, limits: str = "") -> Path:
    """A project folder with the test flows and manifests, on ``store_url``."""
    (root / "flows").mkdir(parents=True, exist_ok=True)
    for name, text in flows.items():
        (root / "flows" / f"{name}.yaml").write_text(text)
    (root / "events.yaml").write_text(events)
    (root / "tarry.toml").write_text(f'[tarry]\ndatabase = "{store_url}"\n'
                                     + (f"[limits]\n{limits}\n" if limits else ""))
    return root


@dataclass
class Served:
    """A running server: its base URL, engine and settings."""

    url: str
    engine: Engine
    settings: Settings
    server: uvicorn.Server

    def client(self, token: str | None = None) -> httpx.Client:
        """An HTTP client of the server, with ``token`` as its bearer token."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=10)


@contextmanager
def serve(root: Path, env: Mapping[str, str] | None = None, *,
          worker: bool = True) -> Iterator[Served]:
    """Serve the project at ``root`` until the block ends (then shut down gracefully)."""
    settings = load_settings(root, dict(env or {}))
    engine = Engine.from_settings(settings)
    app = create_app(engine, settings, worker=worker)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None,
                            access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="tarry-test-server", daemon=True)
    thread.start()
    try:
        _wait_started(server, thread)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield Served(f"http://127.0.0.1:{port}", engine, settings, server)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        engine.close()


def _wait_started(server: uvicorn.Server, thread: threading.Thread) -> None:
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)

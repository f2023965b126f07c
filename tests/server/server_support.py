"""A tarry project served over a real socket: uvicorn on 127.0.0.1, a free port, a thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from tarry.clock import Clock
from tarry.config import Settings, load_settings
from tarry.engine.runtime import Engine
from tarry.server.app import create_app
from tarry.store.base import Store

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


def status_becomes(client: httpx.Client, run_id: str, status: str,
                   timeout: float = 10.0) -> bool:
    """Whether the run reaches ``status`` within ``timeout`` seconds (the in-process worker
    runs on the wall clock)."""
    return eventually(lambda: client.get(f"/v1/runs/{run_id}").json()["status"] == status,
                      timeout)


def eventually(condition: Callable[[], object], timeout: float = 10.0) -> bool:
    """Whether ``condition`` holds now or within ``timeout`` seconds (the server and its
    worker run beside the test)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def start(client: httpx.Client, flow: str, **body: object) -> dict[str, Any]:
    """Start a run over HTTP; its run document."""
    response = client.post("/v1/runs", json={"flow": flow, **body})
    assert response.status_code == 201, response.text
    document: dict[str, Any] = response.json()
    return document


@contextmanager
def serve(root: Path, env: Mapping[str, str] | None = None, *,
          worker: bool = True, store: Store | None = None,
          clock: Clock | None = None) -> Iterator[Served]:
    """Serve the project at ``root`` until the block ends (then shut down gracefully);
    ``env`` stands for the environment (tokens, secrets). A test that moves time itself
    passes a ``clock`` (a virtual one wants ``worker=False``: a worker on it would skip
    ahead to every deadline)."""
    settings = load_settings(root, dict(env or {}))
    with closing(Engine.from_settings(settings, store=store, clock=clock)) as engine:
        app = create_app(engine, settings, worker=worker, environ=dict(env or {}))
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


def _wait_started(server: uvicorn.Server, thread: threading.Thread) -> None:
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)

"""A project for the dashboard tests, with a run in every kind of wait, and a browser-like
HTTP client that signs in and submits the dashboard's forms with their CSRF token."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from server_support import Served

from tarry.engine.runtime import Engine
from tarry.model import EventRecord, RunRecord, RunStatus

if TYPE_CHECKING:
    from browsers import Tab

APPROVAL_FLOW = """\
flow: approval
inputs:
  deal: { type: string, required: true }
steps:
  - ask:
      log: { message: "please approve {{ deal }}" }
  - approval:
      wait_for: deal.approved
      match: { deal: "{{ deal }}" }
      timeout: 1d
      remind:
        every: 6h
        steps:
          - nudge: { log: { message: "still waiting for {{ deal }}" } }
  - decided:
      exit: decided
"""

NAP_FLOW = """\
flow: nap
steps:
  - nap:
      wait: { for: 2d }
"""

DEPLOY_FLOW = """\
flow: deploy
hold:
  - check: ticket
steps:
  - ship:
      log: { message: "deploying {{ run.target }}" }
"""

REOPEN_FLOW = """\
flow: reopen
description: Reopen the deal when its ticket closes.
on:
  - event: ticket.closed
steps:
  - note:
      log: { message: "reopened" }
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
  ticket.closed:
    correlate_on: [ticket]
"""

CHECK_SCRIPT = """\
#!/bin/sh
# The ticket system cannot be asked (a fault): the run stays held and the fault is counted.
exit 1
"""

FLOWS = {"approval": APPROVAL_FLOW, "nap": NAP_FLOW, "deploy": DEPLOY_FLOW,
         "reopen": REOPEN_FLOW}

LIVE_WAIT_MS = 15_000
"""How long a browser test waits for an open page to update itself (it polls every 5 s)."""

_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def write_dashboard_project(root: Path, store_url: str) -> Path:
    """A project with the dashboard's test flows, manifests and a check script."""
    (root / "flows").mkdir(parents=True, exist_ok=True)
    for name, text in FLOWS.items():
        (root / "flows" / f"{name}.yaml").write_text(text)
    (root / "events.yaml").write_text(EVENTS)
    check = root / "check-ticket.sh"
    check.write_text(CHECK_SCRIPT)
    check.chmod(0o755)
    (root / "tarry.toml").write_text(f'[tarry]\ndatabase = "{store_url}"\n\n'
                                     f'[checks]\nticket = "{check}"\n')
    return root


@dataclass(frozen=True)
class Scene:
    """The runs and the event the dashboard tests look at."""

    approval: RunRecord
    """Waits for ``deal.approved`` matching deal "D1" (a day, reminders every 6 h)."""
    nap: RunRecord
    """Waits on a two-day timer."""
    deploy: RunRecord
    """Held on the check ``ticket`` (which cannot tell: one fault), target acme/web#7."""
    quarantined: EventRecord
    """A ``deal.approved`` for deal "D1" with ``approved: "yes"`` (not a boolean)."""


def eventually(condition: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    """Wait until ``condition`` holds (the server's worker runs in another thread)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.02)


def settled(engine: Engine, runs: Iterable[RunRecord], status: RunStatus) -> None:
    """Wait until every run of ``runs`` has ``status``."""
    ids = [run.id for run in runs]
    eventually(lambda: all(engine.store.get_run(i).status is status for i in ids),
               f"runs {ids} are {status}")


def stage(served: Served) -> Scene:
    """Start the scene's runs on the served project's worker and send the invalid event."""
    engine = served.engine
    approval = engine.start("approval", {"deal": "D1"})
    nap = engine.start("nap")
    deploy = engine.start("deploy", target="acme/web#7")
    settled(engine, [approval, nap], RunStatus.WAITING)
    eventually(lambda: (engine.store.get_run(deploy.id).waiting_for or {}).get("rounds") == 1,
               "the held run's first check ran")
    quarantined = engine.send("deal.approved", {"deal": "D1", "approved": "yes"})
    return Scene(engine.store.get_run(approval.id), engine.store.get_run(nap.id),
                 engine.store.get_run(deploy.id), quarantined)


def csrf_of(html: str) -> str:
    """The CSRF token of the first form on a page."""
    found = _CSRF.search(html)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


class Browser:
    """An HTTP client that keeps the dashboard's cookie, like a browser."""

    def __init__(self, served: Served) -> None:
        self.http = httpx.Client(base_url=served.url, timeout=10, follow_redirects=False)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_: object) -> None:
        self.http.close()

    def get(self, path: str, **kwargs: object) -> httpx.Response:
        """GET a page."""
        return self.http.get(path, **kwargs)  # type: ignore[arg-type]

    def submit(self, page: str, action: str, **fields: str) -> httpx.Response:
        """Open ``page``, then post ``fields`` to ``action`` with that page's CSRF token."""
        token = csrf_of(self.get(page).text)
        return self.http.post(action, data={"csrf": token, **fields})

    def sign_in(self, token: str) -> httpx.Response:
        """Sign in with ``token`` through the form."""
        return self.submit("/signin", "/signin", token=token, next="/runs")


def sign_in_tab(tab: Tab, served: Served, token: str, *, path: str = "/runs",
                shot: str | None = None) -> None:
    """Open ``path`` in a real browser, be sent to the sign-in form, sign in with ``token``
    and land on ``path`` (``shot``: the name of a screenshot of the form)."""
    page = tab.page
    page.goto(f"{served.url}{path}")
    assert page.url.startswith(f"{served.url}/signin?next=")
    if shot:
        tab.screenshot(shot)
    page.fill("#token", token)
    page.click("button:has-text('Sign in')")
    page.wait_for_url(f"{served.url}{path}")

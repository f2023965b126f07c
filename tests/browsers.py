"""A headless Chromium for the browser tests (a pytest plugin, loaded by ``tests/conftest.py``).

The browser is Debian's ``chromium`` package, driven by Playwright through its
``executable_path`` (Playwright's own browser downloads are never used), with the network
features that reach out (updates, sync, QUIC, background requests) switched off. One browser
serves the whole session; each test gets a fresh context (cookies, storage) whose requests
may only go to this machine's loopback: any other is aborted and counted.

Without ``/usr/bin/chromium`` or Playwright the browser tests are skipped, and the summary
says so loudly. Screenshots go to ``test-artifacts/`` at the repository root (printed at the
end of the run).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Route

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
LAPTOP = {"width": 1366, "height": 768}
"""The viewport of the screenshots: a common laptop screen."""

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
BROWSER_SKIPPED = ("BROWSER TESTS NOT RUN: they need Debian's chromium package "
                   "(apt-get install -y chromium) and Playwright (pip install -e '.[dev]')")
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
_STARTED = time.time()


def _missing() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing"
    if importlib.util.find_spec("playwright") is None:
        return "Playwright is not installed"
    return None


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """A headless Chromium for one test module (skips the test when there is none).

    Module scope, not session: Playwright's sync API keeps its own event loop running on the
    main thread while it is open, and every asyncio test run after it in the same process
    would fail ("Cannot run the event loop while another loop is running")."""
    missing = _missing()
    if missing:
        pytest.skip(f"{BROWSER_SKIPPED} ({missing})")
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 (only when present)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@dataclass
class Tab:
    """A page in a fresh browser context, kept on this machine."""

    page: Page
    shots: Path
    refused: list[str] = field(default_factory=list)
    """Requests to anywhere but loopback (aborted)."""

    def screenshot(self, name: str) -> Path:
        """Save the whole page as ``<name>.png`` among the test run's artifacts."""
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def tab(chromium: Browser, request: pytest.FixtureRequest) -> Iterator[Tab]:
    """A fresh page on a laptop-sized screen whose screenshots are kept under the test's
    name; it fails the test if the page tried to reach another machine."""
    shots = ARTIFACTS / request.node.name.replace("/", "_")
    shots.mkdir(parents=True, exist_ok=True)
    context = chromium.new_context(viewport=LAPTOP)  # type: ignore[arg-type]
    opened = Tab(context.new_page(), shots)

    def keep_local(route: Route) -> None:
        if urlsplit(route.request.url).hostname in _LOOPBACK:
            route.continue_()
        else:
            opened.refused.append(route.request.url)
            route.abort()

    context.route("**/*", keep_local)
    yield opened
    context.close()
    assert opened.refused == [], f"the page tried to reach other machines: {opened.refused}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say loudly when the browser tests were skipped, and where their screenshots are."""
    skipped = [report for report in terminalreporter.stats.get("skipped", [])
               if "BROWSER TESTS NOT RUN" in str(getattr(report, "longrepr", ""))]
    if skipped:
        terminalreporter.write_sep("!", f"{len(skipped)} browser tests did NOT run: "
                                        f"{BROWSER_SKIPPED}", red=True, bold=True)
    elif any(shot.stat().st_mtime >= _STARTED for shot in ARTIFACTS.rglob("*.png")):
        terminalreporter.write_line(f"dashboard screenshots of this run: {ARTIFACTS}")

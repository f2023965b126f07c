"""The documentation site builds strictly, offline, with every public name and every HTTP
route on its reference pages (``mkdocs build --strict``, as ``.ci/run`` builds it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import tarry
from markdown_blocks import ROOT

pytestmark = pytest.mark.timeout(240)  # one build with the API reference, on a busy machine

_EXTERNAL = re.compile(r"^(https?:)?//", re.IGNORECASE)
_CSS_URL = re.compile(r"url\(\s*['\"]?((https?:)?//[^)'\"]*)", re.IGNORECASE)
_ASSET_LINKS = {"stylesheet", "icon", "preload", "modulepreload", "manifest", "prefetch"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as CI builds it, in a folder of its own."""
    folder = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                             "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir",
                             str(folder)], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=200, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return folder


class _Assets(HTMLParser):
    """The URLs a page loads by itself: scripts, images, frames, stylesheets, icons."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag in {"script", "img", "iframe", "source", "audio", "video", "embed"}:
            self.urls.append(found.get("src") or "")
        elif tag == "link" and _ASSET_LINKS & set((found.get("rel") or "").split()):
            self.urls.append(found.get("href") or "")


def external_assets(site: Path) -> list[str]:
    """Every asset a page or a stylesheet of ``site`` would fetch from another host."""
    problems = []
    for page in sorted(site.rglob("*.html")):
        parser = _Assets()
        parser.feed(page.read_text(encoding="utf-8"))
        problems += [f"{page.relative_to(site)}: {url}" for url in parser.urls
                     if _EXTERNAL.match(url)]
    for sheet in sorted(site.rglob("*.css")):
        problems += [f"{sheet.relative_to(site)}: {found[1]}"
                     for found in _CSS_URL.finditer(sheet.read_text(encoding="utf-8"))]
    return problems


def test_the_site_loads_nothing_from_another_host(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert external_assets(site) == []


def test_the_offline_check_sees_a_web_font_and_a_cdn_script(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text(
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">'
        '<script src="//cdn.example.com/x.js"></script><a href="https://example.com">ok</a>',
        encoding="utf-8")
    (tmp_path / "main.css").write_text("a { background: url('https://cdn.example.com/a.png') }",
                                       encoding="utf-8")
    assert external_assets(tmp_path) == [
        "index.html: https://fonts.googleapis.com/css?family=Roboto",
        "index.html: //cdn.example.com/x.js", "main.css: https://cdn.example.com/a.png"]


def test_the_python_reference_documents_every_public_name(site: Path) -> None:
    page = (site / "reference" / "index.html").read_text(encoding="utf-8")
    missing = [name for name in tarry.__all__ if f'id="tarry.{name}"' not in page]
    assert missing == []
    assert ":class:" not in page
    assert ":meth:" not in page


def test_the_http_reference_documents_every_route(site: Path) -> None:
    page = (site / "http-api" / "index.html").read_text(encoding="utf-8")
    for route in ("POST /v1/runs", "GET /v1/runs/{run_id}", "POST /v1/events/{event}",
                  "POST /v1/tasks/{task_id}/complete", "GET /healthz"):
        assert f"<code>{route}</code>" in page, route


def test_every_page_of_the_docs_folder_is_in_the_navigation() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(path.name for path in (ROOT / "docs").glob("*.md"))
    assert [page for page in pages if f": {page}\n" not in config] == []


def test_no_page_cites_the_specification(site: Path) -> None:
    """The reference pages are written from the code's docstrings and the OpenAPI document:
    what they say is user-facing too."""
    citing = [str(page.relative_to(site)) for page in sorted(site.rglob("*.html"))
              if re.search(r"\bSPEC\b", page.read_text(encoding="utf-8"))]
    assert citing == []

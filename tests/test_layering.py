"""The package import graph points one way (docs/architecture.md, "The packages").

The domain types (``tarry.model``), the clock and the action registry sit below everything;
``store`` and ``language`` know nothing of the engine; ``holds`` is used by the engine and
never uses it back. Every import counts, including those inside functions.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import tarry
from tarry.client import ApiError, AsyncClient, Client

SOURCE = Path(__file__).resolve().parent.parent / "src" / "tarry"

FORBIDDEN: dict[str, frozenset[str]] = {
    "model": frozenset({"engine", "holds", "language", "store", "sdk", "cli", "scenarios",
                        "actions", "config"}),
    "values": frozenset({"engine", "holds", "language", "store", "sdk", "cli", "scenarios",
                         "actions", "config", "model"}),
    "clock": frozenset({"engine", "holds", "language", "store", "sdk", "cli", "scenarios"}),
    "eventloop": frozenset({"engine", "holds", "language", "store", "sdk", "cli", "scenarios",
                            "actions", "config", "model", "values", "clock", "server"}),
    "files": frozenset({"engine", "holds", "language", "store", "sdk", "cli", "scenarios",
                        "actions", "config", "model", "values", "clock"}),
    "actions": frozenset({"engine", "holds", "store", "sdk", "cli", "scenarios"}),
    "store": frozenset({"engine", "holds", "language", "sdk", "cli", "scenarios", "testing"}),
    "language": frozenset({"engine", "holds", "store", "sdk", "cli", "scenarios", "testing"}),
    "holds": frozenset({"engine", "sdk", "cli", "scenarios", "testing"}),
    "engine": frozenset({"sdk", "cli", "scenarios", "testing"}),
}
"""For each top-level part of the package, the parts it may not import."""


def _part(module: Path) -> str:
    """The top-level part a source file belongs to (``engine``, ``model``, …)."""
    relative = module.relative_to(SOURCE)
    return relative.parts[0].removesuffix(".py")


def _imported_parts(module: Path) -> set[str]:
    """The top-level parts of ``tarry`` that ``module`` imports anywhere in its body."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text(), str(module))):
        names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        for name in names:
            parts = name.split(".")
            if parts[0] == "tarry" and len(parts) > 1:
                found.add(parts[1])
    return found


MODULES = sorted(path for path in SOURCE.rglob("*.py") if _part(path) in FORBIDDEN)


@pytest.mark.parametrize("module", MODULES, ids=lambda path: str(path.relative_to(SOURCE)))
def test_module_imports_only_what_its_layer_allows(module: Path) -> None:
    wrong = _imported_parts(module) & FORBIDDEN[_part(module)]
    assert not wrong, f"{module.relative_to(SOURCE)} imports tarry.{', tarry.'.join(wrong)}"


def test_holds_and_engine_do_not_import_each_other() -> None:
    holds = set().union(*(_imported_parts(p) for p in (SOURCE / "holds").rglob("*.py")))
    engine = set().union(*(_imported_parts(p) for p in (SOURCE / "engine").rglob("*.py")))
    assert "engine" not in holds
    assert "holds" in engine  # the engine drives the hold gate; the dependency is one way


def _packages_imported(modules: str, among: set[str]) -> set[str]:
    """Which of the packages ``among`` a fresh interpreter has loaded once it imported
    ``modules`` (a comma-separated list)."""
    code = f"import sys, {modules}; print(sorted({{m.split('.')[0] for m in sys.modules}}))"
    printed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, timeout=60).stdout
    return among & set(ast.literal_eval(printed))


def test_the_command_line_starts_without_the_web_server_modules() -> None:
    """Every command but ``tarry serve`` starts without importing FastAPI or uvicorn (about
    a second of a command's start-up); ``serve`` imports them when it runs."""
    assert _packages_imported("tarry.cli.app",
                              {"fastapi", "uvicorn", "starlette", "jinja2"}) == set()


def test_a_worker_starts_without_the_http_client() -> None:
    """The engine and its worker import httpx (and, through its own command line, click,
    rich and pygments) only when a flow's ``http.request`` runs or the program asks for
    :class:`tarry.Client`: about 7 MiB of every worker's memory."""
    assert _packages_imported("tarry, tarry.engine.runtime, tarry.engine.worker",
                              {"httpx", "click", "rich", "pygments"}) == set()


def test_a_worker_starts_without_the_schema_checker() -> None:
    """jsonschema (with referencing and rpds) and RE2 are imported on the first JSON Schema
    checked (a manifest's ``schema``, a task's ``form``), not with the language: about 3 MiB
    of a worker whose project declares none."""
    assert _packages_imported("tarry, tarry.engine.runtime, tarry.engine.worker, tarry.cli.app",
                              {"jsonschema", "referencing", "rpds", "re2"}) == set()


def test_the_http_client_is_still_a_name_of_the_package() -> None:
    assert (tarry.Client, tarry.AsyncClient, tarry.ApiError) == (Client, AsyncClient, ApiError)
    with pytest.raises(AttributeError, match="module 'tarry' has no attribute 'Clients'"):
        _ = tarry.Clients

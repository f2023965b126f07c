"""docs/serve.md says what the server does: its tables of errors, metrics and client methods
are the code's own."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from tarry import Client
from tarry.server.errors import ERROR_TYPES
from tarry.server.metrics import Metrics
from tarry.store.sqlite import SQLiteStore

GUIDE = (Path(__file__).parents[2] / "docs" / "serve.md").read_text(encoding="utf-8")


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

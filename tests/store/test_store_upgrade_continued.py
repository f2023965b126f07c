"""The upgrade that links runs continued as new (migration 0016): a database written by the
release before it keeps its runs, which read back with no link, and a new run can name the
run it continues. On SQLite and PostgreSQL."""

from __future__ import annotations

from store_samples import T0, new_run
from test_store_upgrade_created import _execute, empty_url  # noqa: F401 - the fixture

from tarry.clock import to_millis
from tarry.store import open_store

RELEASE_15 = 15
"""The last schema version without ``runs.continued_from``."""


def test_the_upgrade_keeps_every_run_and_links_new_ones(empty_url: str) -> None:  # noqa: F811
    old = open_store(empty_url, check_schema=False)
    old._migrations = old._migrations[:RELEASE_15]  # type: ignore[attr-defined]
    old.migrate()
    old.close()
    _execute(empty_url, "INSERT INTO runs (id, flow, flow_digest, status, inputs, state, "
                        "created_at, updated_at) VALUES ('old', 'f', 'd', 'succeeded', '{}', "
                        "'{}', ?, ?)", (to_millis(T0), to_millis(T0)))

    store = open_store(empty_url, check_schema=False)
    assert store.migrate()[:1] == ["0016_continued"]
    store.create_run(new_run("next", continued_from="old"), [])
    assert store.get_run("old").continued_from is None
    assert (store.get_run("next").continued_from, store.continued_as("old")) == ("old", "next")
    store.close()

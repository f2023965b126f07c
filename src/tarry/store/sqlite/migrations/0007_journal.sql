-- The run journal: what a run completed (a step's binding, a Python flow's finished
-- operation), appended once when it completes and never rewritten, so a checkpoint writes
-- what changed rather than the whole state. The run row's state keeps the live path only.
CREATE TABLE run_journal (
    seq    INTEGER PRIMARY KEY,
    run_id TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    scope  TEXT    NOT NULL,
    key    TEXT    NOT NULL,
    value  TEXT    NOT NULL
);

-- A resume reads a run's entries of some scopes (and, in one scope, only some keys).
CREATE INDEX run_journal_lookup ON run_journal (run_id, scope, key);

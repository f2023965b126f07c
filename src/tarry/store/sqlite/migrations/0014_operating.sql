-- Operating runs. A rerun names the run it reruns (rerun_of), so a run's reruns are found
-- from it; few runs are reruns, so the index holds only those.
ALTER TABLE runs ADD COLUMN rerun_of TEXT;
CREATE INDEX runs_rerun_of ON runs (rerun_of) WHERE rerun_of IS NOT NULL;

-- A bulk action (cancel or retry) over the runs a filter selects, worked through in short
-- transactions: each acts on a page of runs and advances the counts and the cursor (the
-- keyset position, created_at and id, of the last run looked at) together, so a batch
-- repeated after an interruption acts on no run twice.
CREATE TABLE batches (
    id         TEXT    PRIMARY KEY,
    action     TEXT    NOT NULL,
    filter     TEXT    NOT NULL,
    reason     TEXT,
    principal  TEXT    NOT NULL,
    state      TEXT    NOT NULL,
    total      INTEGER NOT NULL,
    acted      INTEGER NOT NULL DEFAULT 0,
    skipped    INTEGER NOT NULL DEFAULT 0,
    cursor_at  INTEGER NOT NULL,
    cursor_id  TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

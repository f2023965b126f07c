-- Tasks for people: every task a run's ask step opened, open until completed,
-- timed out or abandoned, and kept afterwards with who completed it and how.

CREATE TABLE tasks (
    id           TEXT    PRIMARY KEY,
    run_id       TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step         TEXT    NOT NULL,
    title        TEXT    NOT NULL,
    details      TEXT,
    assign       TEXT    NOT NULL,
    form         TEXT,
    outcomes     TEXT    NOT NULL,
    state        TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    until        INTEGER NOT NULL,
    reminders    INTEGER NOT NULL,
    outcome      TEXT,
    data         TEXT,
    completed_by TEXT,
    completed_at INTEGER
);

-- The inbox lists tasks by state, newest first; a checkpoint looks up a run's open ones.
CREATE INDEX tasks_state_created ON tasks (state, created_at);
CREATE INDEX tasks_open_run ON tasks (run_id) WHERE state = 'open';

-- The SQLite schema as all migrations leave it (a test keeps the two in step).
-- Instants are INTEGER epoch milliseconds (UTC); payloads are JSON text.

CREATE TABLE schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL DEFAULT (CAST(strftime('%s', 'now') AS INTEGER) * 1000)
);

CREATE TABLE flows (
    digest     TEXT    PRIMARY KEY,
    name       TEXT    NOT NULL,
    source     TEXT    NOT NULL,
    created_at INTEGER NOT NULL DEFAULT (CAST(strftime('%s', 'now') AS INTEGER) * 1000)
);

CREATE TABLE runs (
    id               TEXT    PRIMARY KEY,
    flow             TEXT    NOT NULL,
    flow_digest      TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    inputs           TEXT    NOT NULL,
    target           TEXT,
    state            TEXT    NOT NULL,
    exit             TEXT,
    error            TEXT,
    reason           TEXT,
    result           TEXT,
    waiting_for      TEXT,
    due_at           INTEGER,
    lease_owner      TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    cancelled_by     TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    created_data     TEXT,
    at_step          TEXT,
    recoveries       INTEGER NOT NULL DEFAULT 0,
    rerun_of         TEXT,
    continued_from   TEXT,
    parent_id        TEXT,
    parent_step      TEXT
);

-- Claiming and the worker's next wake read only runs that will ever be due.
CREATE INDEX runs_due ON runs (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX runs_status_created ON runs (status, created_at);
CREATE INDEX runs_flow_created ON runs (flow, created_at);
-- A flow's drawing counts its runs per step (waiting, held, running, failed) from this.
CREATE INDEX runs_at_step ON runs (flow, at_step, status)
    WHERE status IN ('waiting', 'held', 'running', 'failed');
-- Retention deletes ended runs oldest end first.
CREATE INDEX runs_ended ON runs (updated_at)
    WHERE status IN ('succeeded', 'failed', 'cancelled', 'refused');
-- A run's reruns (few runs are reruns).
CREATE INDEX runs_rerun_of ON runs (rerun_of) WHERE rerun_of IS NOT NULL;
-- A run's successor, when it continued as new (few runs do).
CREATE INDEX runs_continued_from ON runs (continued_from) WHERE continued_from IS NOT NULL;
-- A parent's child runs (few runs are children).
CREATE INDEX runs_parent ON runs (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE history (
    id     INTEGER PRIMARY KEY,
    run_id TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    at     INTEGER NOT NULL,
    kind   TEXT    NOT NULL,
    step   TEXT,
    data   TEXT    NOT NULL
);

CREATE INDEX history_run ON history (run_id, id);

CREATE TABLE events (
    id           TEXT    NOT NULL,
    type         TEXT    NOT NULL,
    state        TEXT    NOT NULL,
    data         TEXT    NOT NULL,
    match_key    TEXT,
    errors       TEXT    NOT NULL,
    runs         TEXT    NOT NULL,
    received_at  INTEGER NOT NULL,
    buffer_until INTEGER,
    updated_at   INTEGER NOT NULL,
    started      TEXT    NOT NULL DEFAULT '[]',
    PRIMARY KEY (type, id)
);

CREATE INDEX events_id ON events (id);
CREATE INDEX events_state_received ON events (state, received_at);
-- An early reply waits here for the run that will register its wait later.
CREATE INDEX events_buffered ON events (type, match_key, received_at) WHERE state = 'buffered';

-- One row per alternative a suspended branch waits for; delivery looks up (type, match_key).
CREATE TABLE event_waits (
    run_id    TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    wait_id   TEXT    NOT NULL,
    type      TEXT    NOT NULL,
    match_key TEXT    NOT NULL,
    until     INTEGER NOT NULL,
    first_wins INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, wait_id, type, match_key)
);

CREATE INDEX event_waits_lookup ON event_waits (type, match_key);

-- Events delivered to a branch and not yet taken in by its run.
CREATE TABLE inbox (
    seq         INTEGER PRIMARY KEY,
    run_id      TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    wait_id     TEXT    NOT NULL,
    event_type  TEXT    NOT NULL,
    event_id    TEXT    NOT NULL,
    data        TEXT    NOT NULL,
    received_at INTEGER NOT NULL
);

CREATE INDEX inbox_run ON inbox (run_id, wait_id);

-- One row per check running somewhere in the fleet; a row whose lease lapsed (its worker
-- died) no longer counts.
CREATE TABLE check_slots (
    holder      TEXT    PRIMARY KEY,
    lease_until INTEGER NOT NULL
);

-- One row per held run that has a target; cleared_at is set when its hold clears, and the
-- marker keeps refusing siblings for a while after that.
CREATE TABLE hold_markers (
    run_id     TEXT    PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    flow       TEXT    NOT NULL,
    target     TEXT    NOT NULL,
    cleared_at INTEGER
);

CREATE INDEX hold_markers_target ON hold_markers (flow, target);

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
CREATE INDEX tasks_run ON tasks (run_id, state);

-- Idempotency keys of run starts (POST /v1/runs): the run the first attempt with a key created.
CREATE TABLE idempotency_keys (
    principal   TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    run_id      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (principal, key)
);

CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- One row per schedule trigger of the project, due at its next occurrence. handled_until is
-- the instant up to which its occurrences were created (or skipped by catch_up); a worker
-- advances it only from the value it read, so two workers never fire one occurrence twice.
CREATE TABLE schedules (
    key           TEXT    PRIMARY KEY,
    flow          TEXT    NOT NULL,
    handled_until INTEGER NOT NULL,
    next_at       INTEGER NOT NULL
);

CREATE INDEX schedules_next ON schedules (next_at);

-- One row per occurrence created: its key (schedule and instant) is unique, so an occurrence
-- exists at most once across the fleet.
CREATE TABLE schedule_occurrences (
    key          TEXT    PRIMARY KEY,
    schedule     TEXT    NOT NULL,
    run_id       TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    scheduled_at INTEGER NOT NULL
);

CREATE INDEX schedule_occurrences_schedule ON schedule_occurrences (schedule, scheduled_at);
CREATE INDEX schedule_occurrences_run ON schedule_occurrences (run_id);
CREATE TABLE run_journal (
    seq    INTEGER PRIMARY KEY,
    run_id TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    scope  TEXT    NOT NULL,
    key    TEXT    NOT NULL,
    value  TEXT    NOT NULL
);

-- A resume reads a run's entries of some scopes (and, in one scope, only some keys).
CREATE INDEX run_journal_lookup ON run_journal (run_id, scope, key);

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

-- Pacing starts. A throttle's turns: the instant each run of a flow's key may run its first
-- step, handed out in order under the key's lock (only the latest ones matter: a turn older
-- than its throttle's period is forgotten when the key's next turn is taken, and a turn goes
-- with its run when retention deletes the run).
CREATE TABLE throttle_turns (
    flow   TEXT    NOT NULL,
    key    TEXT    NOT NULL,
    turn   INTEGER NOT NULL,
    run_id TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    PRIMARY KEY (flow, key, turn, run_id)
);

CREATE INDEX throttle_turns_run ON throttle_turns (run_id);

-- A debounced trigger's latest burst per key: the pending run its events gather into (it
-- starts at fire_at with the last event's inputs), and when the burst began (for 'max'). It
-- goes with its run when retention deletes the run.
CREATE TABLE debounces (
    trigger  TEXT    NOT NULL,
    key      TEXT    NOT NULL,
    flow     TEXT    NOT NULL,
    run_id   TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    first_at INTEGER NOT NULL,
    last_at  INTEGER NOT NULL,
    fire_at  INTEGER NOT NULL,
    events   INTEGER NOT NULL,
    PRIMARY KEY (trigger, key)
);

-- tarry triggers lists the bursts still to fire, soonest first.
CREATE INDEX debounces_fire_at ON debounces (fire_at);
CREATE INDEX debounces_run ON debounces (run_id);
-- Slots: a flow's concurrency keys and the steps' named pools, kept in the store so that every
-- worker sharing it counts the same slots. A holder row per slot taken (a run past its start:
-- holder ''; a step whose action runs: holder = its path); a queue row per run or step waiting
-- for one, served oldest first (seq) by the transaction that frees a slot.
CREATE TABLE slot_holders (
    key      TEXT    NOT NULL,
    run_id   TEXT    NOT NULL,
    holder   TEXT    NOT NULL,
    taken_at INTEGER NOT NULL,
    PRIMARY KEY (key, run_id, holder)
);

-- A run that ends gives back every slot it holds.
CREATE INDEX slot_holders_run ON slot_holders (run_id);

CREATE TABLE slot_queue (
    seq        INTEGER PRIMARY KEY,
    key        TEXT    NOT NULL,
    run_id     TEXT    NOT NULL,
    holder     TEXT    NOT NULL,
    slot_limit INTEGER NOT NULL,
    queued_at  INTEGER NOT NULL,
    UNIQUE (key, run_id, holder)
);

-- A freed slot goes to the oldest entry of its key's queue.
CREATE INDEX slot_queue_order ON slot_queue (key, seq);

-- A run that ends leaves every queue it waits in.
CREATE INDEX slot_queue_run ON slot_queue (run_id);

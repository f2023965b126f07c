-- Events: the record of every event sent, the index of waiting branches, and run inboxes.

CREATE TABLE events (
    id           TEXT   NOT NULL,
    type         TEXT   NOT NULL,
    state        TEXT   NOT NULL,
    data         JSONB  NOT NULL,
    match_key    TEXT,
    errors       JSONB  NOT NULL,
    runs         JSONB  NOT NULL,
    received_at  BIGINT NOT NULL,
    buffer_until BIGINT,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (type, id)
);

CREATE INDEX events_id ON events (id);
CREATE INDEX events_state_received ON events (state, received_at);
CREATE INDEX events_received ON events (received_at);
-- An early reply waits here for the run that will register its wait later.
CREATE INDEX events_buffered ON events (type, match_key, received_at) WHERE state = 'buffered';

-- One row per alternative a suspended branch waits for; delivery looks up (type, match_key).
CREATE TABLE event_waits (
    run_id    TEXT   NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    wait_id   TEXT   NOT NULL,
    type      TEXT   NOT NULL,
    match_key TEXT   NOT NULL,
    until     BIGINT NOT NULL,
    PRIMARY KEY (run_id, wait_id, type, match_key)
);

CREATE INDEX event_waits_lookup ON event_waits (type, match_key);

-- Events delivered to a branch and not yet taken in by its run.
CREATE TABLE inbox (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id      TEXT   NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    wait_id     TEXT   NOT NULL,
    event_type  TEXT   NOT NULL,
    event_id    TEXT   NOT NULL,
    data        JSONB  NOT NULL,
    received_at BIGINT NOT NULL
);

CREATE INDEX inbox_run ON inbox (run_id, wait_id);

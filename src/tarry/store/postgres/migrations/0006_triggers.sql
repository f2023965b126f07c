-- Triggers: schedules that start runs at their occurrences, and what each event
-- started.

-- One row per schedule trigger of the project, due at its next occurrence. handled_until is
-- the instant up to which its occurrences were created (or skipped by catch_up); a worker
-- advances it only from the value it read, so two workers never fire one occurrence twice.
CREATE TABLE schedules (
    key           TEXT    PRIMARY KEY,
    flow          TEXT    NOT NULL,
    handled_until BIGINT  NOT NULL,
    next_at       BIGINT  NOT NULL
);

CREATE INDEX schedules_next ON schedules (next_at);

-- One row per occurrence created: its key (schedule and instant) is unique, so an occurrence
-- exists at most once across the fleet.
CREATE TABLE schedule_occurrences (
    key          TEXT    PRIMARY KEY,
    schedule     TEXT    NOT NULL,
    run_id       TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    scheduled_at BIGINT  NOT NULL
);

CREATE INDEX schedule_occurrences_schedule ON schedule_occurrences (schedule, scheduled_at);

-- The runs an event started through event triggers (a JSON list of ids).
ALTER TABLE events ADD COLUMN started JSONB NOT NULL DEFAULT '[]';

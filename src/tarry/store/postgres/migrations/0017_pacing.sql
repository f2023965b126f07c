-- Pacing starts. A throttle's turns: the instant each run of a flow's key may run its first
-- step, handed out in order under the key's lock (only the latest ones matter: a turn older
-- than its throttle's period is forgotten when the key's next turn is taken, and a turn goes
-- with its run when retention deletes the run).
CREATE TABLE throttle_turns (
    flow   TEXT    NOT NULL,
    key    TEXT    NOT NULL,
    turn   BIGINT  NOT NULL,
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
    first_at BIGINT  NOT NULL,
    last_at  BIGINT  NOT NULL,
    fire_at  BIGINT  NOT NULL,
    events   BIGINT  NOT NULL,
    PRIMARY KEY (trigger, key)
);

-- tarry triggers lists the bursts still to fire, soonest first.
CREATE INDEX debounces_fire_at ON debounces (fire_at);
CREATE INDEX debounces_run ON debounces (run_id);

-- Pacing starts. A throttle's turns: the instant each run of a flow's key may run its first
-- step, handed out in order under the key's lock (only the latest ones matter: a turn older
-- than its throttle's period is forgotten when the key's next turn is taken).
CREATE TABLE throttle_turns (
    flow   TEXT    NOT NULL,
    key    TEXT    NOT NULL,
    turn   INTEGER NOT NULL,
    run_id TEXT    NOT NULL,
    PRIMARY KEY (flow, key, turn, run_id)
);

-- A debounced trigger's open burst per key: the pending run its events gather into (it
-- starts at fire_at with the last event's inputs), and when the burst began (for 'max').
CREATE TABLE debounces (
    trigger  TEXT    NOT NULL,
    key      TEXT    NOT NULL,
    flow     TEXT    NOT NULL,
    run_id   TEXT    NOT NULL,
    first_at INTEGER NOT NULL,
    last_at  INTEGER NOT NULL,
    fire_at  INTEGER NOT NULL,
    events   INTEGER NOT NULL,
    PRIMARY KEY (trigger, key)
);

-- tarry triggers lists the bursts still to fire, soonest first.
CREATE INDEX debounces_fire_at ON debounces (fire_at);

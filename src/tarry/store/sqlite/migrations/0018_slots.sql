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

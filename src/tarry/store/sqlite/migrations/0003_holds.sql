-- Holds: the check slots every worker sharing the store draws from, and the markers that
-- refuse a second hold of the same flow and target.

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

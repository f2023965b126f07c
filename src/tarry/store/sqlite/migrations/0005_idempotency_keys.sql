-- Idempotency keys of run starts over HTTP: a retried POST /v1/runs with the same key (from
-- the same principal) returns the run the first attempt created. The key is reserved with
-- the run's id before the run is created, so an attempt cut off in between is finished by
-- the retry instead of creating a second run.
CREATE TABLE idempotency_keys (
    principal   TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    run_id      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (principal, key)
);

CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

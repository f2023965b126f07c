-- Claims PostgreSQL writes in one statement (not part of the dialect-neutral set, whose
-- due_runs/due_run and lease_runs take two: SQLite's RETURNING cannot name the FROM rows).
-- The store's _claim override runs them.

-- name: claim_due_runs
-- due_runs and lease_runs in one statement (one round trip): the earliest due runs nobody
-- else is claiming, leased; each row says the status it had (claimed_from) and when it was
-- due (was_due, to keep the earliest first).
WITH due AS (
    SELECT id, status, due_at FROM runs WHERE due_at <= %(now)s
    ORDER BY due_at LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE runs
SET status = 'running', lease_owner = %(worker)s, due_at = %(lease_until)s,
    updated_at = %(now)s
FROM due WHERE runs.id = due.id
RETURNING runs.*, due.status AS claimed_from, due.due_at AS was_due

-- name: claim_due_run
-- due_run and lease_runs in one statement (as claim_due_runs, for one run).
WITH due AS (
    SELECT id, status, due_at FROM runs WHERE id = %(id)s AND due_at <= %(now)s
    FOR UPDATE SKIP LOCKED
)
UPDATE runs
SET status = 'running', lease_owner = %(worker)s, due_at = %(lease_until)s,
    updated_at = %(now)s
FROM due WHERE runs.id = due.id
RETURNING runs.*, due.status AS claimed_from, due.due_at AS was_due

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

-- name: claim_due_runs_with_inbox
-- claim_due_runs, and each claimed run's inbox (inbox_rows: a JSON array of its rows, oldest
-- first, each event's data as JSON text, as the inbox_of_runs rows have it), in one
-- statement: run on its own, it commits without BEGIN or COMMIT.
WITH due AS (
    SELECT id, status, due_at FROM runs WHERE due_at <= %(now)s
    ORDER BY due_at LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE runs
    SET status = 'running', lease_owner = %(worker)s, due_at = %(lease_until)s,
        updated_at = %(now)s
    FROM due WHERE runs.id = due.id
    RETURNING runs.*, due.status AS claimed_from, due.due_at AS was_due
)
SELECT claimed.*,
       COALESCE((SELECT json_agg(json_build_object(
                             'seq', seq, 'wait_id', wait_id, 'event_type', event_type,
                             'event_id', event_id, 'data', data::text,
                             'received_at', received_at) ORDER BY seq)
                 FROM inbox WHERE inbox.run_id = claimed.id), '[]') AS inbox_rows
FROM claimed

-- Claims and checkpoints PostgreSQL writes in one statement, in place of the dialect-neutral
-- set's due_runs/due_run and lease_runs, which take two (SQLite's RETURNING cannot name the
-- FROM rows), and beside its checkpoint_run, which writes one run. The store's overrides run
-- them; the two-statement claims are SQLite's alone.

-- name: claim_due_run
-- due_run and lease_runs in one statement (one round trip): the run, if it is due and nobody
-- else is claiming it, leased; the row says the status it had (claimed_from) and when it was
-- due (was_due).
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
-- due_runs and lease_runs: the earliest due runs nobody else is claiming (and, as due_runs
-- says, those due by the ahead instant that nothing can reach before their instant), leased (as
-- claim_due_run, for many), and each claimed run's inbox (inbox_rows: a JSON array of its
-- rows, oldest first, each event's data as JSON text, as inbox_of_runs has it), in one
-- statement. Whatever plan the server caches for it (a generic one knows no limit), each
-- lookup stays one by index: the two NOT EXISTS are fenced (OFFSET 0), else inside the OR each
-- may become a hashed subplan, which reads and hashes the whole table (every event wait of
-- every waiting run: 4 ms with 10,000) in any claim that meets a run due within the
-- look-ahead but not yet due; and the runs are leased by primary key (an array of ids), not
-- by a join with due, which a generic plan hashed, scanning every run, in every claim.
WITH due AS (
    SELECT id, status, due_at FROM runs
    WHERE due_at <= %(ahead)s
      AND (due_at <= %(now)s
           OR (status IN ('waiting', 'held')
               AND NOT EXISTS (SELECT 1 FROM event_waits WHERE event_waits.run_id = runs.id
                               OFFSET 0)
               AND NOT EXISTS (SELECT 1 FROM tasks
                               WHERE tasks.run_id = runs.id AND tasks.state = 'open'
                               OFFSET 0)))
    ORDER BY due_at LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE runs
    SET status = 'running', lease_owner = %(worker)s, due_at = %(lease_until)s,
        updated_at = %(now)s
    WHERE id = ANY (ARRAY(SELECT id FROM due))
    RETURNING runs.*
)
SELECT claimed.*, due.status AS claimed_from, due.due_at AS was_due,
       COALESCE((SELECT json_agg(json_build_object(
                             'seq', seq, 'wait_id', wait_id, 'event_type', event_type,
                             'event_id', event_id, 'data', data::text,
                             'received_at', received_at) ORDER BY seq)
                 FROM inbox WHERE inbox.run_id = claimed.id), '[]') AS inbox_rows
FROM claimed JOIN due ON due.id = claimed.id

-- name: checkpoint_runs
-- checkpoint_run for a batch of runs in one statement: the parameters are arrays, one item per
-- run (the JSON columns as text). The rows are locked in id order, as renew_leases locks them;
-- a run missing from the rows returned is one whose lease the worker lost (nothing written).
-- The arrays go in binary (placeholders ending in b): psycopg writes a text array's items
-- through a regular expression that escapes their quotes, about 20 µs of Python for each
-- item of JSON, held under the GIL while the worker's timers wait; in binary about 1.
WITH u AS (
    SELECT *
    FROM unnest(%(run_ids)b::text[], %(statuses)b::text[], %(states)b::text[],
                %(exits)b::text[], %(errors)b::text[], %(reasons)b::text[],
                %(results)b::text[], %(waiting_fors)b::text[], %(at_steps)b::text[],
                %(releases)b::boolean[], %(due_ats)b::bigint[])
         AS u (run_id, status, state, exit, error, reason, result, waiting_for, at_step,
               release, due_at)
), mine AS (
    SELECT runs.id FROM runs JOIN u ON runs.id = u.run_id
    WHERE runs.lease_owner = %(worker)s
    ORDER BY runs.id
    FOR UPDATE OF runs
)
UPDATE runs
SET status = u.status, state = u.state::jsonb, exit = u.exit, error = u.error::jsonb,
    reason = u.reason, result = u.result::jsonb, waiting_for = u.waiting_for::jsonb,
    at_step = u.at_step, updated_at = %(now)s, recoveries = 0,
    due_at = CASE WHEN u.release THEN u.due_at ELSE runs.due_at END,
    lease_owner = CASE WHEN u.release THEN NULL ELSE runs.lease_owner END
FROM mine JOIN u ON u.run_id = mine.id
WHERE runs.id = mine.id
RETURNING runs.id, runs.cancel_requested

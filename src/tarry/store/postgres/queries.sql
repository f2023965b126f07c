-- The queries of the PostgreSQL store, by name (SQLite defines the same names).
-- Parameters are named (%(name)s). Instants are epoch milliseconds; payloads JSONB, read
-- back as text. Claims lock the rows they take (FOR UPDATE SKIP LOCKED), so concurrent
-- claimers pass each other by instead of waiting.

-- name: schema_exists
-- A row when the database holds a tarry schema. (A scan of the catalog sees tables that
-- other transactions committed meanwhile; to_regclass may not.)
SELECT 1 AS present FROM pg_catalog.pg_tables
WHERE schemaname = current_schema() AND tablename = 'schema_migrations'

-- name: applied_migrations
SELECT version FROM schema_migrations ORDER BY version

-- name: record_migration
INSERT INTO schema_migrations (version, name) VALUES (%(version)s, %(name)s)

-- name: save_flow
INSERT INTO flows (digest, name, source) VALUES (%(digest)s, %(name)s, %(source)s)
ON CONFLICT (digest) DO NOTHING

-- name: flow_source
SELECT source FROM flows WHERE digest = %(digest)s

-- name: insert_run
-- rows is a JSON array of the new runs (Tx.insert), each payload column as JSON text.
INSERT INTO runs (id, flow, flow_digest, status, inputs, target, state, reason, waiting_for,
                  due_at, created_at, updated_at, created_data, rerun_of, continued_from,
                  parent_id, parent_step)
SELECT id, flow, flow_digest, status, inputs::jsonb, target, state::jsonb, reason,
       waiting_for::jsonb, due_at, created_at, created_at, created_data::jsonb, rerun_of,
       continued_from, parent_id, parent_step
FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(
    id text, flow text, flow_digest text, status text, inputs text, target text, state text,
    reason text, waiting_for text, due_at bigint, created_at bigint, created_data text,
    rerun_of text, continued_from text, parent_id text, parent_step text)

-- name: insert_history
-- rows is a JSON array of entries (Tx.insert), data as JSON text; their ids follow its order.
INSERT INTO history (run_id, at, kind, step, data)
SELECT run_id, at, kind, step, data::jsonb
FROM ROWS FROM (jsonb_to_recordset(%(rows)s::jsonb) AS (
    run_id text, at bigint, kind text, step text, data text)) WITH ORDINALITY AS r(
    run_id, at, kind, step, data, position)
ORDER BY position

-- name: renew_leases
-- ids is a JSON array of run ids, found by the primary key whatever the table holds (an array,
-- not an IN over the JSON, which the planner takes for 100 rows and may scan the table for).
-- The rows are locked in id order, as a checkpoint of a batch locks them, so a renewal and a
-- checkpoint of the same runs never deadlock.
WITH mine AS (
    SELECT id FROM runs
    WHERE lease_owner = %(worker)s
      AND id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))
    ORDER BY id
    FOR UPDATE
)
UPDATE runs SET due_at = %(lease_until)s FROM mine WHERE runs.id = mine.id
RETURNING runs.id

-- name: count_recovery
-- A worker begins executing a run it took over (its last worker died running it): one
-- recovery more, if the worker still holds the lease; the count after it.
UPDATE runs SET recoveries = recoveries + 1
WHERE id = %(run_id)s AND lease_owner = %(worker)s
RETURNING recoveries

-- name: checkpoint_run
-- No row back means the worker no longer holds the lease: nothing was written. A checkpoint
-- is progress: the recoveries in a row start again from none.
UPDATE runs
SET status = %(status)s, state = %(state)s, exit = %(exit)s, error = %(error)s,
    reason = %(reason)s, result = %(result)s, waiting_for = %(waiting_for)s,
    at_step = %(at_step)s, updated_at = %(now)s, recoveries = 0,
    due_at = CASE WHEN %(release)s THEN %(due_at)s ELSE due_at END,
    lease_owner = CASE WHEN %(release)s THEN NULL ELSE lease_owner END
WHERE id = %(run_id)s AND lease_owner = %(worker)s
RETURNING cancel_requested

-- name: get_run_for_update
SELECT * FROM runs WHERE id = %(id)s FOR UPDATE

-- name: cancel_run
UPDATE runs
SET status = 'cancelled', due_at = NULL, lease_owner = NULL, waiting_for = NULL,
    cancelled_by = %(by)s,
    updated_at = %(now)s
WHERE id = %(id)s
RETURNING *

-- name: get_run
SELECT * FROM runs WHERE id = %(id)s

-- name: history
-- The run's created entry, kept in its row (created_data; NULL when the run was created
-- without one), then the rest in the order written.
SELECT 0 AS seq, created_at AS at, 'created' AS kind, NULL AS step, created_data AS data
FROM runs WHERE id = %(run_id)s AND created_data IS NOT NULL
UNION ALL
SELECT id, at, kind, step, data FROM history WHERE run_id = %(run_id)s
ORDER BY seq

-- name: list_runs
-- Runs of the statuses (a JSON array), newest first, each other filter optional (NULL: any);
-- keyset paging after (before_at, before_id). A wait kind is the kind of the run's earliest
-- wait; an event type is any of its event waits. No index orders runs of every status: the
-- (status, created_at) index gives each status's page in order, and one statement merges them
-- (one snapshot, so a run changing status between two pages is listed once). The bound
-- `created_at <= coalesce(…)` is the keyset's in a form the index can start from, so a deep
-- page does not walk past every newer run.
SELECT page.* FROM jsonb_array_elements_text(%(statuses)s::jsonb) AS listed (status)
CROSS JOIN LATERAL (
    SELECT * FROM runs
    WHERE runs.status = listed.status
      AND (%(flow)s::text IS NULL OR flow = %(flow)s::text)
      AND (%(target)s::text IS NULL OR target = %(target)s::text)
      AND (%(at_step)s::text IS NULL OR at_step = %(at_step)s::text)
      AND (%(wait_kind)s::text IS NULL OR waiting_for ->> 'kind' = %(wait_kind)s::text)
      AND (%(wait_event)s::text IS NULL OR EXISTS (SELECT 1 FROM event_waits AS w
                                                   WHERE w.run_id = runs.id
                                                     AND w.type = %(wait_event)s::text))
      AND created_at <= coalesce(%(before_at)s::bigint, 9223372036854775807)
      AND (%(before_at)s::bigint IS NULL OR created_at < %(before_at)s::bigint
           OR (created_at = %(before_at)s::bigint AND id < %(before_id)s::text))
    ORDER BY created_at DESC, id DESC LIMIT %(limit)s) AS page
ORDER BY page.created_at DESC, page.id DESC LIMIT %(limit)s

-- name: list_runs_by_flow
-- list_runs of one flow, of any status: the (flow, created_at) index walks them in order.
SELECT * FROM runs
WHERE flow = %(flow)s::text
  AND (%(target)s::text IS NULL OR target = %(target)s::text)
  AND (%(at_step)s::text IS NULL OR at_step = %(at_step)s::text)
  AND (%(wait_kind)s::text IS NULL OR waiting_for ->> 'kind' = %(wait_kind)s::text)
  AND (%(wait_event)s::text IS NULL OR EXISTS (SELECT 1 FROM event_waits AS w
                                               WHERE w.run_id = runs.id
                                                 AND w.type = %(wait_event)s::text))
  AND created_at <= coalesce(%(before_at)s::bigint, 9223372036854775807)
  AND (%(before_at)s::bigint IS NULL OR created_at < %(before_at)s::bigint
       OR (created_at = %(before_at)s::bigint AND id < %(before_id)s::text))
ORDER BY created_at DESC, id DESC LIMIT %(limit)s

-- name: count_runs_per_status
-- The filters of list_runs but status, counted per status.
SELECT status, count(*) AS total FROM runs
WHERE (%(flow)s::text IS NULL OR flow = %(flow)s::text)
  AND (%(target)s::text IS NULL OR target = %(target)s::text)
  AND (%(at_step)s::text IS NULL OR at_step = %(at_step)s::text)
  AND (%(wait_kind)s::text IS NULL OR waiting_for ->> 'kind' = %(wait_kind)s::text)
  AND (%(wait_event)s::text IS NULL OR EXISTS (SELECT 1 FROM event_waits AS w
                                               WHERE w.run_id = runs.id
                                                 AND w.type = %(wait_event)s::text))
GROUP BY status

-- name: count_runs_per_step
-- A flow's waiting, held, running and failed runs counted per step they are at (a flow's
-- drawing), from the runs_at_step index alone.
SELECT at_step, status, count(*) AS total FROM runs
WHERE flow = %(flow)s AND status IN ('waiting', 'held', 'running', 'failed')
GROUP BY at_step, status

-- name: next_due_at
-- The earliest instant a worker has something to do: a run due, or a schedule's occurrence.
SELECT min(due_at) AS due_at FROM (
    SELECT min(due_at) AS due_at FROM runs WHERE due_at IS NOT NULL
    UNION ALL
    SELECT min(next_at) FROM schedules
) AS next_due

-- Events ---------------------------------------------------------------------------------

-- name: lock_keys
-- Takes, until the transaction ends, the lock of each key of :keys (a JSON array, in the order
-- to lock them), of two kinds: a correlation ({"correlation": [type, match_key]}) serialises
-- delivery and wait registration on it; an event id ({"event_id": [type, id]}) the sends of
-- that id, so that a second send sees the first as a duplicate (one bigint key: a lock space
-- apart from the correlations' integer pairs). One statement for any number of locks, taken
-- one after the other: a volatile call in the select list runs after the ORDER BY.
SELECT CASE WHEN k.key ? 'correlation'
            THEN pg_advisory_xact_lock(hashtext(k.key #>> '{correlation,0}'),
                                       hashtext(k.key #>> '{correlation,1}'))
            ELSE pg_advisory_xact_lock(hashtextextended(
                     (k.key #>> '{event_id,0}') || ' ' || (k.key #>> '{event_id,1}'), 0))
       END IS NULL AS locked
FROM jsonb_array_elements(%(keys)s::jsonb) WITH ORDINALITY AS k (key, n)
ORDER BY k.n

-- name: find_event
SELECT * FROM events WHERE type = %(type)s AND id = %(id)s

-- name: find_events
-- The stored events among keys (a JSON array of {type, id}): a primary key lookup each
-- (LATERAL, fenced by OFFSET 0). The planner takes a JSON array for 100 rows: joined plainly,
-- it hashed them and scanned every stored event, a send costing 6-9 ms with 10,000 stored.
SELECT e.*
FROM (SELECT DISTINCT * FROM jsonb_to_recordset(%(keys)s::jsonb) AS k(type text, id text)) AS k
CROSS JOIN LATERAL (SELECT * FROM events WHERE type = k.type AND id = k.id OFFSET 0) AS e

-- name: events_with_id
SELECT * FROM events WHERE id = %(id)s

-- name: insert_event
INSERT INTO events (id, type, state, data, match_key, errors, runs, received_at, buffer_until,
                    updated_at)
VALUES (%(id)s, %(type)s, %(state)s, %(data)s, %(match_key)s, %(errors)s, %(runs)s,
        %(received_at)s, %(buffer_until)s, %(now)s)

-- name: replace_event
UPDATE events
SET state = %(state)s, data = %(data)s, match_key = %(match_key)s, errors = %(errors)s,
    runs = %(runs)s, buffer_until = %(buffer_until)s, updated_at = %(now)s
WHERE type = %(type)s AND id = %(id)s
RETURNING *

-- name: set_event_state
UPDATE events SET state = %(state)s, runs = %(runs)s, updated_at = %(now)s
WHERE type = %(type)s AND id = %(id)s
RETURNING *

-- name: lock_waiting_runs
-- Locks the rows of the runs waiting on the correlations in keys (as waiting_branches), in
-- one order, before waiting_branches reads whether their branches hold an event already: two
-- deliveries of different correlations racing for one run's any: wait then see each other.
SELECT r.id FROM runs r
WHERE r.id IN (SELECT w.run_id
               FROM jsonb_to_recordset(%(keys)s::jsonb) AS k(type text, match_key text,
                                                              received_at bigint)
               CROSS JOIN LATERAL (SELECT run_id FROM event_waits
                                   WHERE type = k.type AND match_key = k.match_key
                                     AND until > k.received_at OFFSET 0) AS w)
ORDER BY r.id
FOR UPDATE OF r

-- name: waiting_branches
-- The branches waiting on each correlation in keys (a JSON array of {type, match_key,
-- received_at}): an index lookup each (LATERAL, fenced by OFFSET 0), never a scan of waiting
-- runs. A wait whose deadline is not after the event's arrival has lost the race.
-- settled: the branch holds a delivered event not yet taken in (first_wins: the wait is
-- settled by its first event), looked up per branch in inbox_run (OFFSET 0 keeps it from becoming a join that scans the inbox).
SELECT DISTINCT k.type, k.match_key, k.received_at, w.run_id, w.wait_id, w.first_wins,
       EXISTS (SELECT 1 FROM inbox i
               WHERE i.run_id = w.run_id AND i.wait_id = w.wait_id
               OFFSET 0) AS settled
FROM jsonb_to_recordset(%(keys)s::jsonb) AS k(type text, match_key text, received_at bigint)
CROSS JOIN LATERAL (SELECT run_id, wait_id, first_wins FROM event_waits
                    WHERE type = k.type AND match_key = k.match_key AND until > k.received_at
                    OFFSET 0) AS w
ORDER BY k.type, k.match_key, k.received_at, w.run_id, w.wait_id

-- name: delete_run_waits
DELETE FROM event_waits WHERE run_id = %(run_id)s

-- name: insert_wait
INSERT INTO event_waits (run_id, wait_id, type, match_key, until, first_wins)
VALUES (%(run_id)s, %(wait_id)s, %(type)s, %(match_key)s, %(until)s, %(first_wins)s)
ON CONFLICT DO NOTHING

-- name: insert_inbox
INSERT INTO inbox (run_id, wait_id, event_type, event_id, data, received_at)
VALUES (%(run_id)s, %(wait_id)s, %(event_type)s, %(event_id)s, %(data)s, %(received_at)s)

-- name: delete_inbox
DELETE FROM inbox WHERE seq = %(seq)s

-- name: inbox_of_runs
-- ids is a JSON array of run ids, each an index lookup of its own (as find_events, whatever
-- the size of the table).
SELECT i.*
FROM (SELECT DISTINCT jsonb_array_elements_text(%(ids)s::jsonb) AS run_id) AS ids
CROSS JOIN LATERAL (SELECT * FROM inbox WHERE run_id = ids.run_id OFFSET 0) AS i
ORDER BY i.seq

-- name: waits_of_runs
-- The correlations the runs in ids (a JSON array) wait on: an index lookup per run (as
-- find_events; a plain IN scanned every waiting run's waits, 4-12 ms with 20,000 waiting).
SELECT DISTINCT w.type, w.match_key
FROM (SELECT DISTINCT jsonb_array_elements_text(%(ids)s::jsonb) AS run_id) AS ids
CROSS JOIN LATERAL (SELECT type, match_key FROM event_waits
                    WHERE run_id = ids.run_id OFFSET 0) AS w

-- name: registered_waits
-- The event waits the runs in ids (a JSON array) have registered now: an index lookup per
-- run (as waits_of_runs).
SELECT w.*
FROM (SELECT DISTINCT jsonb_array_elements_text(%(ids)s::jsonb) AS run_id) AS ids
CROSS JOIN LATERAL (SELECT run_id, wait_id, type, match_key FROM event_waits
                    WHERE run_id = ids.run_id OFFSET 0) AS w

-- name: delete_wait
DELETE FROM event_waits
WHERE run_id = %(run_id)s AND wait_id = %(wait_id)s AND type = %(type)s
  AND match_key = %(match_key)s

-- name: branch_has_inbox
SELECT 1 AS present FROM inbox WHERE run_id = %(run_id)s AND wait_id = %(wait_id)s LIMIT 1

-- name: run_has_inbox
SELECT 1 AS present FROM inbox WHERE run_id = %(run_id)s LIMIT 1

-- name: oldest_buffered
-- The earliest buffered event a new wait takes; one received at or after the wait's deadline
-- never counts for it.
SELECT * FROM events
WHERE state = 'buffered' AND type = %(type)s AND match_key = %(match_key)s
  AND buffer_until > %(now)s AND received_at < %(until)s
ORDER BY received_at LIMIT 1

-- name: wake_waiting_run
UPDATE runs SET due_at = %(now)s WHERE id = %(run_id)s AND status = 'waiting'

-- name: wake_run_now
UPDATE runs SET due_at = %(now)s WHERE id = %(run_id)s

-- name: expire_buffered
UPDATE events SET state = 'unmatched', updated_at = %(now)s
WHERE state = 'buffered' AND buffer_until <= %(now)s

-- name: count_inbox_events
-- The events an operator may act on, per state (an index range each, however many were
-- delivered).
SELECT state, count(*) AS total FROM events
WHERE state IN ('invalid', 'buffered', 'unmatched')
GROUP BY state

-- name: list_events
-- Events in the states (a JSON array), newest first, of one type if given (NULL: any); keyset
-- paging after the position (before_at, before_type, before_id) of the last event of the
-- previous page. As list_runs: each state's page from the (state, received_at) index, merged
-- by one statement.
SELECT page.* FROM jsonb_array_elements_text(%(states)s::jsonb) AS listed (state)
CROSS JOIN LATERAL (
    SELECT * FROM events
    WHERE events.state = listed.state
      AND (%(type)s::text IS NULL OR type = %(type)s::text)
      AND received_at <= coalesce(%(before_at)s::bigint, 9223372036854775807)
      AND (%(before_at)s::bigint IS NULL OR received_at < %(before_at)s::bigint
           OR (received_at = %(before_at)s::bigint
               AND (type < %(before_type)s::text
                    OR (type = %(before_type)s::text AND id < %(before_id)s::text))))
    ORDER BY received_at DESC, type DESC, id DESC LIMIT %(limit)s) AS page
ORDER BY page.received_at DESC, page.type DESC, page.id DESC LIMIT %(limit)s

-- Holds ------------------------------------------------------------------------------------

-- name: count_runs
SELECT count(*) AS total FROM runs

-- name: count_runs_by_status
SELECT count(*) AS total FROM runs WHERE status = %(status)s

-- name: count_runs_by_flow
SELECT count(*) AS total FROM runs WHERE flow = %(flow)s

-- name: count_runs_by_status_and_flow
SELECT count(*) AS total FROM runs WHERE status = %(status)s AND flow = %(flow)s

-- name: run_ids_from
-- The ids from a prefix on, in order (a range scan of the primary key): the runs whose
-- id starts with the prefix come first.
SELECT id FROM runs WHERE id >= %(prefix)s ORDER BY id LIMIT %(limit)s

-- name: lock_hold_target
-- Serialises starts of held runs of one flow and target until the transaction ends.
SELECT pg_advisory_xact_lock(hashtextextended(%(flow)s || ' ' || %(target)s, 5)) IS NULL
       AS locked

-- name: purge_hold_markers
-- Forget the markers of one flow and target that refuse nothing any more: cleared before
-- %(since)s (unless the run is held again: a worker died between its clear and its first
-- checkpoint), or never cleared and their run no longer held (refused, cancelled).
DELETE FROM hold_markers
WHERE flow = %(flow)s AND target = %(target)s
  AND NOT EXISTS (
      SELECT 1 FROM runs WHERE runs.id = hold_markers.run_id
                           AND (runs.status = 'held'
                                OR (runs.status = 'running' AND hold_markers.cleared_at IS NULL)))
  AND (cleared_at IS NULL OR cleared_at <= %(since)s)

-- name: hold_sibling
-- A run of this flow and target that is held, or cleared after %(since)s (after a purge).
SELECT run_id FROM hold_markers WHERE flow = %(flow)s AND target = %(target)s
ORDER BY run_id LIMIT 1

-- name: insert_hold_marker
INSERT INTO hold_markers (run_id, flow, target, cleared_at)
VALUES (%(run_id)s, %(flow)s, %(target)s, NULL)

-- name: clear_hold_marker
UPDATE hold_markers SET cleared_at = %(now)s WHERE run_id = %(run_id)s

-- name: lock_check_slots
-- Serialises slot leases across the fleet until the transaction ends.
SELECT pg_advisory_xact_lock(hashtextextended('tarry.check_slots', 5)) IS NULL AS locked

-- name: expire_check_slots
DELETE FROM check_slots WHERE lease_until <= %(now)s

-- name: other_check_slots
SELECT count(*) AS taken FROM check_slots WHERE holder <> %(holder)s

-- name: take_check_slot
INSERT INTO check_slots (holder, lease_until) VALUES (%(holder)s, %(lease_until)s)
ON CONFLICT (holder) DO UPDATE SET lease_until = excluded.lease_until

-- name: release_check_slot
DELETE FROM check_slots WHERE holder = %(holder)s

-- Tasks ----------------------------------------------------------------------------------

-- name: open_tasks_of_run
SELECT id, reminders FROM tasks WHERE run_id = %(run_id)s AND state = 'open'

-- name: insert_task
-- A task completed while its run was being advanced comes back from that advance once more.
INSERT INTO tasks (id, run_id, step, title, details, assign, form, outcomes, state, created_at,
                   until, reminders)
VALUES (%(id)s, %(run_id)s, %(step)s, %(title)s, %(details)s, %(assign)s, %(form)s,
        %(outcomes)s, 'open', %(created_at)s, %(until)s, %(reminders)s)
ON CONFLICT (id) DO NOTHING

-- name: set_task_reminders
UPDATE tasks SET reminders = %(reminders)s WHERE id = %(id)s AND state = 'open'

-- name: close_task
-- A task its run no longer waits on: timed out once its deadline passed, else abandoned.
UPDATE tasks SET state = CASE WHEN until <= %(now)s THEN 'timeout' ELSE 'cancelled' END
WHERE id = %(id)s AND state = 'open'

-- name: close_run_tasks
UPDATE tasks SET state = CASE WHEN until <= %(now)s THEN 'timeout' ELSE 'cancelled' END
WHERE run_id = %(run_id)s AND state = 'open'

-- name: get_task
SELECT tasks.*, runs.flow AS flow, runs.target AS target
FROM tasks JOIN runs ON runs.id = tasks.run_id
WHERE tasks.id = %(id)s

-- name: task_ids_from
-- The ids from a prefix on, in order (a range scan of the primary key): the tasks whose id
-- starts with the prefix come first.
SELECT id FROM tasks WHERE id >= %(prefix)s ORDER BY id LIMIT %(limit)s

-- name: lock_task
SELECT state, until FROM tasks WHERE id = %(id)s FOR UPDATE

-- name: complete_task
UPDATE tasks
SET state = 'completed', outcome = %(outcome)s, data = %(data)s, completed_by = %(by)s,
    completed_at = %(at)s
WHERE id = %(id)s AND state = 'open'

-- name: list_tasks
-- Newest first; state null lists every state.
SELECT tasks.*, runs.flow AS flow, runs.target AS target
FROM tasks JOIN runs ON runs.id = tasks.run_id
WHERE (%(state)s::text IS NULL OR tasks.state = %(state)s::text)
ORDER BY tasks.created_at DESC, tasks.id DESC
LIMIT %(limit)s

-- Idempotency keys ------------------------------------------------------------------------

-- name: purge_idempotency_keys
-- A key is kept for a day (IDEMPOTENCY_KEY_RETENTION); older ones are forgotten here, in the
-- reserving transaction, so the table holds about a day of starts (an index range, cheap).
DELETE FROM idempotency_keys WHERE created_at < %(cutoff)s

-- name: reserve_idempotency_key
INSERT INTO idempotency_keys (principal, key, fingerprint, run_id, created_at)
VALUES (%(principal)s, %(key)s, %(fingerprint)s, %(run_id)s, %(now)s)
ON CONFLICT (principal, key) DO NOTHING

-- name: idempotency_key
SELECT fingerprint, run_id FROM idempotency_keys
WHERE principal = %(principal)s AND key = %(key)s

-- Triggers ------------------------------------------------------------------

-- name: add_schedule
-- A schedule first seen is handled up to now: nothing before it is caught up.
INSERT INTO schedules (key, flow, handled_until, next_at)
VALUES (%(key)s, %(flow)s, %(handled_until)s, %(next_at)s)
ON CONFLICT (key) DO NOTHING

-- name: schedule_keys
SELECT key FROM schedules

-- name: drop_schedule
DELETE FROM schedules WHERE key = %(key)s

-- name: due_schedules
SELECT key, flow, handled_until, next_at FROM schedules
WHERE next_at <= %(now)s ORDER BY next_at LIMIT %(limit)s

-- name: advance_schedule
-- Only from the value the worker read: one that lost the race to another changes nothing.
UPDATE schedules SET handled_until = %(handled_until)s, next_at = %(next_at)s
WHERE key = %(key)s AND handled_until = %(expected)s

-- name: held_occurrences
SELECT o.run_id FROM schedule_occurrences o JOIN runs r ON r.id = o.run_id
WHERE o.schedule = %(schedule)s AND r.status = 'held'

-- name: refuse_held_run
UPDATE runs
SET status = 'refused', reason = %(reason)s, due_at = NULL, waiting_for = NULL, updated_at = %(now)s
WHERE id = %(id)s AND status = 'held'

-- name: insert_occurrence
INSERT INTO schedule_occurrences (key, schedule, run_id, scheduled_at)
VALUES (%(key)s, %(schedule)s, %(run_id)s, %(scheduled_at)s)

-- name: set_event_started
UPDATE events SET started = %(started)s WHERE type = %(type)s AND id = %(id)s
-- Journal ----------------------------------------------------------------------------------

-- name: insert_journal
-- rows is a JSON array of entries (Tx.insert), value as JSON text; their seqs follow its order.
INSERT INTO run_journal (run_id, scope, key, value)
SELECT run_id, scope, key, value::jsonb
FROM ROWS FROM (jsonb_to_recordset(%(rows)s::jsonb) AS (
    run_id text, scope text, key text, value text)) WITH ORDINALITY AS r(
    run_id, scope, key, value, position)
ORDER BY position

-- name: journal_entries
-- One run's entries of the scopes in :scopes (a JSON array), oldest first; in the scope
-- :selective (NULL: none) only the keys in :keys (a JSON array, no key twice). Each scope,
-- and each key of :selective, is an index lookup of its own: LATERAL, fenced by OFFSET 0 so
-- that the planner cannot flatten it into a scan of all the run's entries, whatever a young
-- table's statistics say.
SELECT found.seq, found.scope, found.key, found.value
FROM jsonb_array_elements_text(%(scopes)s::jsonb) AS scopes (scope)
CROSS JOIN LATERAL (SELECT seq, scope, key, value FROM run_journal
                    WHERE run_id = %(run_id)s AND scope = scopes.scope OFFSET 0) AS found
WHERE scopes.scope IS DISTINCT FROM %(selective)s::text
UNION ALL
SELECT found.seq, found.scope, found.key, found.value
FROM jsonb_array_elements_text(%(keys)s::jsonb) AS keys (key)
CROSS JOIN LATERAL (SELECT seq, scope, key, value FROM run_journal
                    WHERE run_id = %(run_id)s AND scope = %(selective)s::text
                      AND key = keys.key OFFSET 0) AS found
WHERE %(selective)s::text IN (SELECT jsonb_array_elements_text(%(scopes)s::jsonb))
ORDER BY seq

-- name: journal_of_runs
-- Every entry of the runs in :ids (a JSON array), oldest first: an index lookup per run (as
-- find_events; a plain IN scanned every run's entries).
SELECT j.run_id, j.scope, j.key, j.value
FROM (SELECT DISTINCT jsonb_array_elements_text(%(ids)s::jsonb) AS run_id) AS ids
CROSS JOIN LATERAL (SELECT seq, run_id, scope, key, value FROM run_journal
                    WHERE run_id = ids.run_id OFFSET 0) AS j
ORDER BY j.seq

-- name: purge_ended_runs
-- Retention: delete up to :limit runs that ended before :before, the earliest ended first
-- (the runs_ended index), skipping runs another transaction holds. Each run's history,
-- journal, tasks, inbox, event waits, hold marker and schedule occurrence go with it (ON
-- DELETE CASCADE), in the caller's transaction.
DELETE FROM runs WHERE id IN (
    SELECT id FROM runs
    WHERE status IN ('succeeded', 'failed', 'cancelled', 'refused') AND updated_at < %(before)s
    ORDER BY updated_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED)

-- name: count_ended_runs
SELECT count(*) AS total FROM runs
WHERE status IN ('succeeded', 'failed', 'cancelled', 'refused') AND updated_at < %(before)s

-- name: purge_settled_events
-- Retention: delete up to :limit events in :state (delivered, duplicate, discarded or
-- unmatched: never buffered or quarantined) received before :before, the earliest first (the
-- (state, received_at) index), skipping events another transaction holds; each by its row
-- address (a TID scan).
DELETE FROM events WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM events
    WHERE state = %(state)s AND received_at < %(before)s
    ORDER BY received_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED))

-- name: count_settled_events
-- What purge_settled_events would delete once expire_buffered has run.
SELECT count(*) AS total FROM events
WHERE (state IN ('delivered', 'duplicate', 'discarded', 'unmatched')
       OR (state = 'buffered' AND buffer_until <= %(now)s))
  AND received_at < %(before)s

-- Operating runs ---------------------------------------------------------------------------

-- name: retry_run
-- A failed run, unchanged since it was read (seen), made pending again, due now.
UPDATE runs
SET status = 'pending', due_at = %(now)s, state = %(state)s::jsonb,
    inputs = %(inputs)s::jsonb, exit = NULL, error = NULL, waiting_for = NULL,
    lease_owner = NULL, cancel_requested = false, cancelled_by = NULL, updated_at = %(now)s
WHERE id = %(id)s AND status = 'failed' AND updated_at = %(seen)s
RETURNING *

-- name: move_run
-- A held or waiting run moved to another definition of its flow (its row locked and read
-- first), due now when what it waits for changed (wake).
UPDATE runs
SET flow_digest = %(to_digest)s, state = %(state)s::jsonb, updated_at = %(now)s,
    due_at = CASE WHEN %(wake)s = 1 AND due_at > %(now)s THEN %(now)s ELSE due_at END
WHERE id = %(id)s AND status = %(status)s AND flow_digest = %(from_digest)s
  AND lease_owner IS NULL
RETURNING *

-- name: lock_runs
-- The runs in ids (a JSON array), locked in id order, as a checkpoint locks them.
SELECT id, status FROM runs
WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))
ORDER BY id
FOR UPDATE

-- name: cancel_runs
-- The held, pending and waiting runs of ids (a JSON array), cancelled at once.
UPDATE runs
SET status = 'cancelled', due_at = NULL, lease_owner = NULL, waiting_for = NULL,
    cancelled_by = %(by)s, updated_at = %(now)s
WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))
  AND status IN ('held', 'pending', 'waiting')
RETURNING id

-- name: request_cancel_runs
-- The running runs of ids (a JSON array): their workers end them at the next checkpoint.
UPDATE runs SET cancel_requested = true, cancelled_by = %(by)s, updated_at = %(now)s
WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))
  AND status = 'running'
RETURNING id

-- name: delete_waits_of_runs
DELETE FROM event_waits
WHERE run_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))

-- name: close_tasks_of_runs
UPDATE tasks SET state = CASE WHEN until <= %(now)s THEN 'timeout' ELSE 'cancelled' END
WHERE run_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))
  AND state = 'open'

-- name: forget_journal
-- The entries of one scope of a run's journal whose keys are in keys (a JSON array).
DELETE FROM run_journal
WHERE run_id = %(run_id)s AND scope = %(scope)s
  AND key = ANY (ARRAY(SELECT jsonb_array_elements_text(%(keys)s::jsonb)))

-- name: reruns_of
SELECT id FROM runs WHERE rerun_of = %(id)s ORDER BY created_at, id

-- name: continued_as
SELECT id FROM runs WHERE continued_from = %(id)s ORDER BY created_at, id LIMIT 1

-- name: rebuffer_event
-- An event delivered to a run that continued as new and not taken in by it: buffered again
-- for its successor, until the given instant at least.
UPDATE events SET state = 'buffered', updated_at = %(now)s,
    buffer_until = greatest(coalesce(buffer_until, 0), %(until)s)
WHERE type = %(type)s AND id = %(id)s

-- name: delete_run_inbox
DELETE FROM inbox WHERE run_id = %(run_id)s

-- name: count_runs_selected
-- The runs list_runs pages through (the same filters), before the keyset position.
SELECT count(*) AS total FROM runs
WHERE status = ANY (ARRAY(SELECT jsonb_array_elements_text(%(statuses)s::jsonb)))
  AND (%(flow)s::text IS NULL OR flow = %(flow)s::text)
  AND (%(target)s::text IS NULL OR target = %(target)s::text)
  AND (%(wait_kind)s::text IS NULL OR waiting_for ->> 'kind' = %(wait_kind)s::text)
  AND (%(wait_event)s::text IS NULL OR EXISTS (SELECT 1 FROM event_waits AS w
                                               WHERE w.run_id = runs.id
                                                 AND w.type = %(wait_event)s::text))
  AND (created_at < %(before_at)s::bigint
       OR (created_at = %(before_at)s::bigint AND id < %(before_id)s::text))

-- name: insert_batch
INSERT INTO batches (id, action, filter, reason, principal, state, total, cursor_at,
                     cursor_id, created_at, updated_at)
VALUES (%(id)s, %(action)s, %(filter)s::jsonb, %(reason)s, %(principal)s, %(state)s,
        %(total)s, %(cursor_at)s, %(cursor_id)s, %(now)s, %(now)s)

-- name: get_batch
SELECT * FROM batches WHERE id = %(id)s

-- name: get_batch_for_update
SELECT * FROM batches WHERE id = %(id)s FOR UPDATE

-- name: advance_batch
UPDATE batches
SET acted = acted + %(acted)s, skipped = skipped + %(skipped)s, state = %(state)s,
    cursor_at = %(cursor_at)s, cursor_id = %(cursor_id)s, updated_at = %(now)s
WHERE id = %(id)s
RETURNING *

-- name: unfinished_batches
SELECT id FROM batches WHERE state = 'running' ORDER BY created_at, id

-- name: children_of
-- A run's child runs, oldest first (the runs_parent index).
SELECT id FROM runs WHERE parent_id = %(id)s ORDER BY created_at, id

-- name: live_children
-- The child runs of the runs in ids (a JSON array) that have not ended.
SELECT id FROM runs
WHERE parent_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))
  AND status IN ('held', 'pending', 'running', 'waiting')

-- name: notify_parents
-- The end of each run of ids (a JSON array) that is the child of a run not ended, put in
-- that parent's inbox under the waiting step's path (each child found by its key, its
-- parent by its key).
INSERT INTO inbox (run_id, wait_id, event_type, event_id, data, received_at)
SELECT child.parent_id, child.parent_step, 'child', child.id,
       jsonb_build_object('status', child.status, 'exit', child.exit, 'result', child.result,
                          'error', child.error, 'run', child.id),
       %(now)s
FROM runs AS child JOIN runs AS parent ON parent.id = child.parent_id
WHERE child.id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))
  AND child.parent_id IS NOT NULL
  AND parent.status IN ('held', 'pending', 'running', 'waiting')
RETURNING run_id

-- name: wake_parents
-- Wake the waiting runs of ids (a JSON array): a child of theirs ended.
UPDATE runs SET due_at = %(now)s
WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb))) AND status = 'waiting'
-- Pacing starts -----------------------------------------------------------------------------

-- name: lock_throttle_key
-- Serialises the turns of one flow's throttle key until the transaction ends.
SELECT pg_advisory_xact_lock(hashtextextended(%(flow)s || ' ' || %(key)s, 7)) IS NULL
       AS locked

-- name: recent_throttle_turns
-- The latest %(limit)s turns of a flow's throttle key, newest first (its primary key,
-- backwards).
SELECT turn FROM throttle_turns WHERE flow = %(flow)s AND key = %(key)s
ORDER BY turn DESC LIMIT %(limit)s

-- name: forget_throttle_turns
-- Turns at or before %(before)s (older than the throttle's period) decide nothing any more.
DELETE FROM throttle_turns WHERE flow = %(flow)s AND key = %(key)s AND turn <= %(before)s

-- name: insert_throttle_turn
INSERT INTO throttle_turns (flow, key, turn, run_id)
VALUES (%(flow)s, %(key)s, %(turn)s, %(run_id)s)
ON CONFLICT DO NOTHING

-- name: lock_debounce_key
-- Serialises the events of one debounced trigger's key until the transaction ends.
SELECT pg_advisory_xact_lock(hashtextextended(%(trigger)s || ' ' || %(key)s, 8)) IS NULL
       AS locked

-- name: find_debounce
SELECT * FROM debounces WHERE trigger = %(trigger)s AND key = %(key)s

-- name: debounce_run
-- Gather an event into its burst's run: the last event's inputs and target, started later;
-- only while that run has not been claimed and its instant lies after the event (a claim
-- holds the row's lock: this waits for it, then sees the run running and changes nothing).
UPDATE runs SET inputs = %(inputs)s::jsonb, target = %(target)s, due_at = %(due_at)s,
                updated_at = %(now)s
WHERE id = %(id)s AND status = 'pending' AND lease_owner IS NULL AND due_at > %(received_at)s

-- name: save_debounce
INSERT INTO debounces (trigger, key, flow, run_id, first_at, last_at, fire_at, events)
VALUES (%(trigger)s, %(key)s, %(flow)s, %(run_id)s, %(first_at)s, %(last_at)s, %(fire_at)s,
        %(events)s)
ON CONFLICT (trigger, key) DO UPDATE SET
    flow = excluded.flow, run_id = excluded.run_id, first_at = excluded.first_at,
    last_at = excluded.last_at, fire_at = excluded.fire_at, events = excluded.events

-- name: pending_debounces
-- The bursts still to fire, soonest first (by their fire_at index).
SELECT * FROM debounces WHERE fire_at > %(now)s ORDER BY fire_at LIMIT %(limit)s

-- The queries of the SQLite store, by name (PostgreSQL defines the same names).
-- Parameters are named (:name). Instants are epoch milliseconds; payloads JSON text.
-- Every write runs inside BEGIN IMMEDIATE, so reads in a write see no concurrent writer.

-- name: schema_exists
-- A row when the database holds a tarry schema.
SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'

-- name: applied_migrations
SELECT version FROM schema_migrations ORDER BY version

-- name: record_migration
INSERT INTO schema_migrations (version, name) VALUES (:version, :name)

-- name: save_flow
INSERT INTO flows (digest, name, source) VALUES (:digest, :name, :source)
ON CONFLICT (digest) DO NOTHING

-- name: flow_source
SELECT source FROM flows WHERE digest = :digest

-- name: insert_run
INSERT INTO runs (id, flow, flow_digest, status, inputs, target, state, reason, waiting_for,
                  due_at, created_at, updated_at, created_data, rerun_of, continued_from,
                  parent_id, parent_step)
VALUES (:id, :flow, :flow_digest, :status, :inputs, :target, :state, :reason, :waiting_for,
        :due_at, :created_at, :created_at, :created_data, :rerun_of, :continued_from,
        :parent_id, :parent_step)

-- name: insert_history
INSERT INTO history (run_id, at, kind, step, data) VALUES (:run_id, :at, :kind, :step, :data)

-- name: due_runs
-- The earliest due runs (a claim, step 1; the write lock keeps them ours until step 2): those
-- due by :now, and those due by :ahead that nothing can reach before their instant (waiting or
-- held, with no event wait and no open task), which a worker claims early and runs at their
-- instant. :ahead = :now claims only the runs due.
SELECT id, status, due_at FROM runs
WHERE due_at <= :ahead
  AND (due_at <= :now
       OR (status IN ('waiting', 'held')
           AND NOT EXISTS (SELECT 1 FROM event_waits WHERE event_waits.run_id = runs.id)
           AND NOT EXISTS (SELECT 1 FROM tasks
                           WHERE tasks.run_id = runs.id AND tasks.state = 'open')))
ORDER BY due_at LIMIT :limit

-- name: due_run
-- One run, if it is due (a claim of that run, step 1).
SELECT id, status, due_at FROM runs WHERE id = :id AND due_at <= :now

-- name: lease_runs
-- Lease the runs of step 1 (:ids, a JSON array); their due_at becomes the lease expiry.
UPDATE runs
SET status = 'running', lease_owner = :worker, due_at = :lease_until, updated_at = :now
WHERE id IN (SELECT value FROM json_each(:ids))
RETURNING *

-- name: renew_leases
-- :ids is a JSON array of run ids.
UPDATE runs SET due_at = :lease_until
WHERE lease_owner = :worker AND id IN (SELECT value FROM json_each(:ids))
RETURNING id

-- name: count_recovery
-- A worker begins executing a run it took over (its last worker died running it): one
-- recovery more, if the worker still holds the lease; the count after it.
UPDATE runs SET recoveries = recoveries + 1
WHERE id = :run_id AND lease_owner = :worker
RETURNING recoveries

-- name: checkpoint_run
-- No row back means the worker no longer holds the lease: nothing was written. A checkpoint
-- is progress: the recoveries in a row start again from none.
UPDATE runs
SET status = :status, state = :state, exit = :exit, error = :error, reason = :reason,
    result = :result, waiting_for = :waiting_for, at_step = :at_step, updated_at = :now,
    recoveries = 0,
    due_at = CASE WHEN :release THEN :due_at ELSE due_at END,
    lease_owner = CASE WHEN :release THEN NULL ELSE lease_owner END
WHERE id = :run_id AND lease_owner = :worker
RETURNING cancel_requested

-- name: get_run_for_update
-- BEGIN IMMEDIATE already holds the write lock.
SELECT * FROM runs WHERE id = :id

-- name: cancel_run
UPDATE runs
SET status = 'cancelled', due_at = NULL, lease_owner = NULL, waiting_for = NULL,
    cancelled_by = :by,
    updated_at = :now
WHERE id = :id
RETURNING *

-- name: get_run
SELECT * FROM runs WHERE id = :id

-- name: history
-- The run's created entry, kept in its row (created_data; NULL when the run was created
-- without one), then the rest in the order written.
SELECT 0 AS seq, created_at AS at, 'created' AS kind, NULL AS step, created_data AS data
FROM runs WHERE id = :run_id AND created_data IS NOT NULL
UNION ALL
SELECT id, at, kind, step, data FROM history WHERE run_id = :run_id
ORDER BY seq

-- name: list_runs
-- Runs of the statuses :statuses (a JSON array), newest first, each other filter optional
-- (NULL: any); keyset paging after (:before_at, :before_id). A wait kind is the kind of the
-- run's earliest wait; an event type is any of its event waits. No index orders runs of every
-- status: the (status, created_at) index gives each status's page in order, and one statement
-- merges them (one snapshot, so a run changing status between two pages is listed once). The
-- bound `created_at <= coalesce(…)` is the keyset's in a form the index can start from, so a
-- deep page does not walk past every newer run.
SELECT runs.* FROM json_each(:statuses) AS listed
JOIN runs ON runs.rowid IN (
    SELECT page.rowid FROM runs AS page
    WHERE page.status = listed.value
      AND (:flow IS NULL OR page.flow = :flow)
      AND (:target IS NULL OR page.target = :target)
      AND (:at_step IS NULL OR page.at_step = :at_step)
      AND (:wait_kind IS NULL OR json_extract(page.waiting_for, '$.kind') = :wait_kind)
      AND (:wait_event IS NULL OR EXISTS (SELECT 1 FROM event_waits AS w
                                          WHERE w.run_id = page.id AND w.type = :wait_event))
      AND page.created_at <= coalesce(:before_at, 9223372036854775807)
      AND (:before_at IS NULL OR page.created_at < :before_at
           OR (page.created_at = :before_at AND page.id < :before_id))
    ORDER BY page.created_at DESC, page.id DESC LIMIT :limit)
ORDER BY runs.created_at DESC, runs.id DESC LIMIT :limit

-- name: list_runs_by_flow
-- list_runs of one flow, of any status: the (flow, created_at) index walks them in order.
SELECT * FROM runs
WHERE flow = :flow
  AND (:target IS NULL OR target = :target)
  AND (:at_step IS NULL OR at_step = :at_step)
  AND (:wait_kind IS NULL OR json_extract(waiting_for, '$.kind') = :wait_kind)
  AND (:wait_event IS NULL OR EXISTS (SELECT 1 FROM event_waits AS w
                                      WHERE w.run_id = runs.id AND w.type = :wait_event))
  AND created_at <= coalesce(:before_at, 9223372036854775807)
  AND (:before_at IS NULL OR created_at < :before_at
       OR (created_at = :before_at AND id < :before_id))
ORDER BY created_at DESC, id DESC LIMIT :limit

-- name: count_runs_per_status
-- The filters of list_runs but status, counted per status.
SELECT status, count(*) AS total FROM runs
WHERE (:flow IS NULL OR flow = :flow)
  AND (:target IS NULL OR target = :target)
  AND (:at_step IS NULL OR at_step = :at_step)
  AND (:wait_kind IS NULL OR json_extract(waiting_for, '$.kind') = :wait_kind)
  AND (:wait_event IS NULL OR EXISTS (SELECT 1 FROM event_waits AS w
                                      WHERE w.run_id = runs.id AND w.type = :wait_event))
GROUP BY status

-- name: count_runs_per_step
-- A flow's waiting, held, running and failed runs counted per step they are at (a flow's
-- drawing), from the runs_at_step index alone.
SELECT at_step, status, count(*) AS total FROM runs
WHERE flow = :flow AND status IN ('waiting', 'held', 'running', 'failed')
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
-- Serialises delivery and wait registration on each correlation of :keys, and the sends of
-- each event id. Never run here: a write's BEGIN IMMEDIATE holds the file's lock, so taking
-- a lock runs nothing (the store's Tx.take); defined as PostgreSQL's is, for both dialects
-- to name the same queries.
SELECT 1 AS locked

-- name: find_event
SELECT * FROM events WHERE type = :type AND id = :id

-- name: find_events
-- The stored events among :keys (a JSON array of {type, id}): a primary key lookup each.
SELECT e.* FROM json_each(:keys) AS k
JOIN events e ON e.type = json_extract(k.value, '$.type')
             AND e.id = json_extract(k.value, '$.id')

-- name: events_with_id
SELECT * FROM events WHERE id = :id

-- name: insert_event
INSERT INTO events (id, type, state, data, match_key, errors, runs, received_at, buffer_until,
                    updated_at)
VALUES (:id, :type, :state, :data, :match_key, :errors, :runs, :received_at, :buffer_until,
        :now)

-- name: replace_event
UPDATE events
SET state = :state, data = :data, match_key = :match_key, errors = :errors, runs = :runs,
    buffer_until = :buffer_until, updated_at = :now
WHERE type = :type AND id = :id
RETURNING *

-- name: set_event_state
UPDATE events SET state = :state, runs = :runs, updated_at = :now
WHERE type = :type AND id = :id
RETURNING *

-- name: lock_waiting_runs
-- Never run here, as lock_keys: BEGIN IMMEDIATE already holds the write lock.
SELECT 1 AS locked

-- name: waiting_branches
-- The branches waiting on each correlation in :keys (a JSON array of {type, match_key,
-- received_at}): an index lookup each, never a scan of waiting runs. A wait whose deadline is
-- not after the event's arrival has lost the race. settled: the branch holds a
-- delivered event not yet taken in; first_wins: the wait is settled by its first event.
SELECT DISTINCT json_extract(k.value, '$.type') AS type,
                json_extract(k.value, '$.match_key') AS match_key,
                json_extract(k.value, '$.received_at') AS received_at, w.run_id, w.wait_id,
                w.first_wins,
                EXISTS (SELECT 1 FROM inbox i
                        WHERE i.run_id = w.run_id AND i.wait_id = w.wait_id) AS settled
FROM json_each(:keys) AS k
JOIN event_waits w ON w.type = json_extract(k.value, '$.type')
                  AND w.match_key = json_extract(k.value, '$.match_key')
                  AND w.until > json_extract(k.value, '$.received_at')
ORDER BY 1, 2, 3, w.run_id, w.wait_id

-- name: delete_run_waits
DELETE FROM event_waits WHERE run_id = :run_id

-- name: insert_wait
INSERT INTO event_waits (run_id, wait_id, type, match_key, until, first_wins)
VALUES (:run_id, :wait_id, :type, :match_key, :until, :first_wins)
ON CONFLICT DO NOTHING

-- name: insert_inbox
INSERT INTO inbox (run_id, wait_id, event_type, event_id, data, received_at)
VALUES (:run_id, :wait_id, :event_type, :event_id, :data, :received_at)

-- name: delete_inbox
DELETE FROM inbox WHERE seq = :seq

-- name: inbox_of_runs
-- :ids is a JSON array of run ids.
SELECT * FROM inbox WHERE run_id IN (SELECT value FROM json_each(:ids)) ORDER BY seq

-- name: waits_of_runs
-- The correlations the runs in :ids (a JSON array) wait on.
SELECT DISTINCT type, match_key FROM event_waits
WHERE run_id IN (SELECT value FROM json_each(:ids))

-- name: registered_waits
-- The event waits the runs in ids (a JSON array) have registered now.
SELECT run_id, wait_id, type, match_key FROM event_waits
WHERE run_id IN (SELECT value FROM json_each(:ids))

-- name: delete_wait
DELETE FROM event_waits
WHERE run_id = :run_id AND wait_id = :wait_id AND type = :type
  AND match_key = :match_key

-- name: branch_has_inbox
SELECT 1 AS present FROM inbox WHERE run_id = :run_id AND wait_id = :wait_id LIMIT 1

-- name: run_has_inbox
SELECT 1 AS present FROM inbox WHERE run_id = :run_id LIMIT 1

-- name: oldest_buffered
-- The earliest buffered event a new wait takes; one received at or after the wait's deadline
-- never counts for it.
SELECT * FROM events
WHERE state = 'buffered' AND type = :type AND match_key = :match_key
  AND buffer_until > :now AND received_at < :until
ORDER BY received_at LIMIT 1

-- name: wake_waiting_run
UPDATE runs SET due_at = :now WHERE id = :run_id AND status = 'waiting'

-- name: wake_run_now
UPDATE runs SET due_at = :now WHERE id = :run_id

-- name: expire_buffered
UPDATE events SET state = 'unmatched', updated_at = :now
WHERE state = 'buffered' AND buffer_until <= :now

-- name: count_inbox_events
-- The events an operator may act on, per state (an index range each, however many were
-- delivered).
SELECT state, count(*) AS total FROM events
WHERE state IN ('invalid', 'buffered', 'unmatched')
GROUP BY state

-- name: list_events
-- Events in the states :states (a JSON array), newest first, of one type if given (NULL: any);
-- keyset paging after the position (:before_at, :before_type, :before_id) of the last event of
-- the previous page. As list_runs: each state's page from the (state, received_at) index,
-- merged by one statement.
SELECT events.* FROM json_each(:states) AS listed
JOIN events ON events.rowid IN (
    SELECT page.rowid FROM events AS page
    WHERE page.state = listed.value
      AND (:type IS NULL OR page.type = :type)
      AND page.received_at <= coalesce(:before_at, 9223372036854775807)
      AND (:before_at IS NULL OR page.received_at < :before_at
           OR (page.received_at = :before_at
               AND (page.type < :before_type
                    OR (page.type = :before_type AND page.id < :before_id))))
    ORDER BY page.received_at DESC, page.type DESC, page.id DESC LIMIT :limit)
ORDER BY events.received_at DESC, events.type DESC, events.id DESC LIMIT :limit

-- Holds ------------------------------------------------------------------------------------

-- name: count_runs
SELECT count(*) AS total FROM runs

-- name: count_runs_by_status
SELECT count(*) AS total FROM runs WHERE status = :status

-- name: count_runs_by_flow
SELECT count(*) AS total FROM runs WHERE flow = :flow

-- name: count_runs_by_status_and_flow
SELECT count(*) AS total FROM runs WHERE status = :status AND flow = :flow

-- name: run_ids_from
-- The ids from a prefix on, in order (a range scan of the primary key): the runs whose
-- id starts with the prefix come first.
SELECT id FROM runs WHERE id >= :prefix ORDER BY id LIMIT :limit

-- name: lock_hold_target
-- Serialises starts of held runs of one flow and target (BEGIN IMMEDIATE already does).
SELECT 1 AS locked

-- name: purge_hold_markers
-- Forget the markers of one flow and target that refuse nothing any more: cleared before
-- :since (unless the run is held again: a worker died between its clear and its first
-- checkpoint), or never cleared and their run no longer held (refused, cancelled).
DELETE FROM hold_markers
WHERE flow = :flow AND target = :target
  AND NOT EXISTS (
      SELECT 1 FROM runs WHERE runs.id = hold_markers.run_id
                           AND (runs.status = 'held'
                                OR (runs.status = 'running' AND hold_markers.cleared_at IS NULL)))
  AND (cleared_at IS NULL OR cleared_at <= :since)

-- name: hold_sibling
-- A run of this flow and target that is held, or cleared after :since (after a purge).
SELECT run_id FROM hold_markers WHERE flow = :flow AND target = :target
ORDER BY run_id LIMIT 1

-- name: insert_hold_marker
INSERT INTO hold_markers (run_id, flow, target, cleared_at) VALUES (:run_id, :flow, :target, NULL)

-- name: clear_hold_marker
UPDATE hold_markers SET cleared_at = :now WHERE run_id = :run_id

-- name: lock_check_slots
-- Serialises slot leases across the fleet (BEGIN IMMEDIATE already does).
SELECT 1 AS locked

-- name: expire_check_slots
DELETE FROM check_slots WHERE lease_until <= :now

-- name: other_check_slots
SELECT count(*) AS taken FROM check_slots WHERE holder <> :holder

-- name: take_check_slot
INSERT INTO check_slots (holder, lease_until) VALUES (:holder, :lease_until)
ON CONFLICT (holder) DO UPDATE SET lease_until = excluded.lease_until

-- name: release_check_slot
DELETE FROM check_slots WHERE holder = :holder

-- Tasks ----------------------------------------------------------------------------------

-- name: open_tasks_of_run
SELECT id, reminders FROM tasks WHERE run_id = :run_id AND state = 'open'

-- name: insert_task
-- A task completed while its run was being advanced comes back from that advance once more.
INSERT INTO tasks (id, run_id, step, title, details, assign, form, outcomes, state, created_at,
                   until, reminders)
VALUES (:id, :run_id, :step, :title, :details, :assign, :form, :outcomes, 'open', :created_at,
        :until, :reminders)
ON CONFLICT (id) DO NOTHING

-- name: set_task_reminders
UPDATE tasks SET reminders = :reminders WHERE id = :id AND state = 'open'

-- name: close_task
-- A task its run no longer waits on: timed out once its deadline passed, else abandoned.
UPDATE tasks SET state = CASE WHEN until <= :now THEN 'timeout' ELSE 'cancelled' END
WHERE id = :id AND state = 'open'

-- name: close_run_tasks
UPDATE tasks SET state = CASE WHEN until <= :now THEN 'timeout' ELSE 'cancelled' END
WHERE run_id = :run_id AND state = 'open'

-- name: get_task
SELECT tasks.*, runs.flow AS flow, runs.target AS target
FROM tasks JOIN runs ON runs.id = tasks.run_id
WHERE tasks.id = :id

-- name: task_ids_from
-- The ids from a prefix on, in order (a range scan of the primary key): the tasks whose id
-- starts with the prefix come first.
SELECT id FROM tasks WHERE id >= :prefix ORDER BY id LIMIT :limit

-- name: lock_task
-- Never run here, as lock_keys: BEGIN IMMEDIATE already holds the write lock.
SELECT state, until FROM tasks WHERE id = :id

-- name: complete_task
UPDATE tasks
SET state = 'completed', outcome = :outcome, data = :data, completed_by = :by,
    completed_at = :at
WHERE id = :id AND state = 'open'

-- name: list_tasks
-- Newest first; :state null lists every state. CROSS JOIN keeps tasks the outer table (SQLite
-- would otherwise scan runs and look each one's tasks up by tasks_run).
SELECT tasks.*, runs.flow AS flow, runs.target AS target
FROM tasks CROSS JOIN runs ON runs.id = tasks.run_id
WHERE (:state IS NULL OR tasks.state = :state)
ORDER BY tasks.created_at DESC, tasks.id DESC
LIMIT :limit

-- Idempotency keys ------------------------------------------------------------------------

-- name: purge_idempotency_keys
-- A key is kept for a day (IDEMPOTENCY_KEY_RETENTION); older ones are forgotten here, in the
-- reserving transaction, so the table holds about a day of starts (an index range, cheap).
DELETE FROM idempotency_keys WHERE created_at < :cutoff

-- name: reserve_idempotency_key
INSERT INTO idempotency_keys (principal, key, fingerprint, run_id, created_at)
VALUES (:principal, :key, :fingerprint, :run_id, :now)
ON CONFLICT (principal, key) DO NOTHING

-- name: idempotency_key
SELECT fingerprint, run_id FROM idempotency_keys WHERE principal = :principal AND key = :key

-- Triggers ------------------------------------------------------------------

-- name: add_schedule
-- A schedule first seen is handled up to now: nothing before it is caught up.
INSERT INTO schedules (key, flow, handled_until, next_at)
VALUES (:key, :flow, :handled_until, :next_at)
ON CONFLICT (key) DO NOTHING

-- name: schedule_keys
SELECT key FROM schedules

-- name: drop_schedule
DELETE FROM schedules WHERE key = :key

-- name: due_schedules
SELECT key, flow, handled_until, next_at FROM schedules
WHERE next_at <= :now ORDER BY next_at LIMIT :limit

-- name: advance_schedule
-- Only from the value the worker read: one that lost the race to another changes nothing.
UPDATE schedules SET handled_until = :handled_until, next_at = :next_at
WHERE key = :key AND handled_until = :expected

-- name: held_occurrences
SELECT o.run_id FROM schedule_occurrences o JOIN runs r ON r.id = o.run_id
WHERE o.schedule = :schedule AND r.status = 'held'

-- name: refuse_held_run
UPDATE runs
SET status = 'refused', reason = :reason, due_at = NULL, waiting_for = NULL, updated_at = :now
WHERE id = :id AND status = 'held'

-- name: insert_occurrence
INSERT INTO schedule_occurrences (key, schedule, run_id, scheduled_at)
VALUES (:key, :schedule, :run_id, :scheduled_at)

-- name: set_event_started
UPDATE events SET started = :started WHERE type = :type AND id = :id
-- Journal ----------------------------------------------------------------------------------

-- name: insert_journal
INSERT INTO run_journal (run_id, scope, key, value) VALUES (:run_id, :scope, :key, :value)

-- name: journal_entries
-- One run's entries of the scopes in :scopes (a JSON array), oldest first; in the scope
-- :selective (NULL: none) only the keys in :keys (a JSON array), each looked up by key.
SELECT seq, scope, key, value FROM run_journal
WHERE run_id = :run_id
  AND scope IN (SELECT value FROM json_each(:scopes) WHERE value IS NOT :selective)
UNION ALL
SELECT seq, scope, key, value FROM run_journal
WHERE run_id = :run_id AND scope = :selective
  AND :selective IN (SELECT value FROM json_each(:scopes))
  AND key IN (SELECT value FROM json_each(:keys))
ORDER BY seq

-- name: journal_of_runs
-- Every entry of the runs in :ids (a JSON array), oldest first.
SELECT run_id, scope, key, value FROM run_journal
WHERE run_id IN (SELECT value FROM json_each(:ids))
ORDER BY seq

-- name: purge_ended_runs
-- Retention: delete up to :limit runs that ended before :before, the earliest ended first
-- (the runs_ended index). Each run's history, journal, tasks, inbox, event waits, hold marker
-- and schedule occurrence go with it (ON DELETE CASCADE), in the caller's transaction.
DELETE FROM runs WHERE id IN (
    SELECT id FROM runs
    WHERE status IN ('succeeded', 'failed', 'cancelled', 'refused') AND updated_at < :before
    ORDER BY updated_at LIMIT :limit)

-- name: count_ended_runs
SELECT count(*) AS total FROM runs
WHERE status IN ('succeeded', 'failed', 'cancelled', 'refused') AND updated_at < :before

-- name: purge_settled_events
-- Retention: delete up to :limit events in :state (delivered, duplicate, discarded or
-- unmatched: never buffered or quarantined) received before :before, the earliest first (the
-- (state, received_at) index).
DELETE FROM events WHERE rowid IN (
    SELECT rowid FROM events WHERE state = :state AND received_at < :before
    ORDER BY received_at LIMIT :limit)

-- name: count_settled_events
-- What purge_settled_events would delete once expire_buffered has run.
SELECT count(*) AS total FROM events
WHERE (state IN ('delivered', 'duplicate', 'discarded', 'unmatched')
       OR (state = 'buffered' AND buffer_until <= :now))
  AND received_at < :before

-- Operating runs ---------------------------------------------------------------------------

-- name: retry_run
-- A failed run, unchanged since it was read (:seen), made pending again, due now.
UPDATE runs
SET status = 'pending', due_at = :now, state = :state, inputs = :inputs, exit = NULL,
    error = NULL, waiting_for = NULL, lease_owner = NULL, cancel_requested = 0,
    cancelled_by = NULL, updated_at = :now
WHERE id = :id AND status = 'failed' AND updated_at = :seen
RETURNING *

-- name: move_run
-- A held or waiting run moved to another definition of its flow (its row read under the
-- write lock first), due now when what it waits for changed (:wake).
UPDATE runs
SET flow_digest = :to_digest, state = :state, updated_at = :now,
    due_at = CASE WHEN :wake = 1 AND due_at > :now THEN :now ELSE due_at END
WHERE id = :id AND status = :status AND flow_digest = :from_digest AND lease_owner IS NULL
RETURNING *

-- name: lock_runs
-- Never run here, as lock_keys: BEGIN IMMEDIATE already holds the write lock.
SELECT id, status FROM runs WHERE id IN (SELECT value FROM json_each(:ids)) ORDER BY id

-- name: cancel_runs
-- The held, pending and waiting runs of :ids (a JSON array), cancelled at once.
UPDATE runs
SET status = 'cancelled', due_at = NULL, lease_owner = NULL, waiting_for = NULL,
    cancelled_by = :by, updated_at = :now
WHERE id IN (SELECT value FROM json_each(:ids)) AND status IN ('held', 'pending', 'waiting')
RETURNING id

-- name: request_cancel_runs
-- The running runs of :ids (a JSON array): their workers end them at the next checkpoint.
UPDATE runs SET cancel_requested = 1, cancelled_by = :by, updated_at = :now
WHERE id IN (SELECT value FROM json_each(:ids)) AND status = 'running'
RETURNING id

-- name: delete_waits_of_runs
DELETE FROM event_waits WHERE run_id IN (SELECT value FROM json_each(:ids))

-- name: close_tasks_of_runs
UPDATE tasks SET state = CASE WHEN until <= :now THEN 'timeout' ELSE 'cancelled' END
WHERE run_id IN (SELECT value FROM json_each(:ids)) AND state = 'open'

-- name: forget_journal
-- The entries of one scope of a run's journal whose keys are in :keys (a JSON array).
DELETE FROM run_journal
WHERE run_id = :run_id AND scope = :scope AND key IN (SELECT value FROM json_each(:keys))

-- name: reruns_of
SELECT id FROM runs WHERE rerun_of = :id ORDER BY created_at, id

-- name: continued_as
SELECT id FROM runs WHERE continued_from = :id ORDER BY created_at, id LIMIT 1

-- name: rebuffer_event
-- An event delivered to a run that continued as new and not taken in by it: buffered again
-- for its successor, until the given instant at least.
UPDATE events SET state = 'buffered', updated_at = :now,
    buffer_until = max(coalesce(buffer_until, 0), :until)
WHERE type = :type AND id = :id

-- name: delete_run_inbox
DELETE FROM inbox WHERE run_id = :run_id

-- name: count_runs_selected
-- The runs list_runs pages through (the same filters), before the keyset position.
SELECT count(*) AS total FROM runs
WHERE status IN (SELECT value FROM json_each(:statuses))
  AND (:flow IS NULL OR flow = :flow)
  AND (:target IS NULL OR target = :target)
  AND (:wait_kind IS NULL OR json_extract(waiting_for, '$.kind') = :wait_kind)
  AND (:wait_event IS NULL OR EXISTS (SELECT 1 FROM event_waits AS w
                                      WHERE w.run_id = runs.id AND w.type = :wait_event))
  AND (created_at < :before_at OR (created_at = :before_at AND id < :before_id))

-- name: insert_batch
INSERT INTO batches (id, action, filter, reason, principal, state, total, cursor_at,
                     cursor_id, created_at, updated_at)
VALUES (:id, :action, :filter, :reason, :principal, :state, :total, :cursor_at, :cursor_id,
        :now, :now)

-- name: get_batch
SELECT * FROM batches WHERE id = :id

-- name: get_batch_for_update
-- BEGIN IMMEDIATE already holds the write lock.
SELECT * FROM batches WHERE id = :id

-- name: advance_batch
UPDATE batches
SET acted = acted + :acted, skipped = skipped + :skipped, state = :state,
    cursor_at = :cursor_at, cursor_id = :cursor_id, updated_at = :now
WHERE id = :id
RETURNING *

-- name: unfinished_batches
SELECT id FROM batches WHERE state = 'running' ORDER BY created_at, id

-- name: children_of
-- A run's child runs, oldest first (the runs_parent index).
SELECT id FROM runs WHERE parent_id = :id ORDER BY created_at, id

-- name: live_children
-- The child runs of the runs in :ids (a JSON array) that have not ended.
SELECT id FROM runs
WHERE parent_id IN (SELECT value FROM json_each(:ids))
  AND status IN ('held', 'pending', 'running', 'waiting')

-- name: notify_parents
-- The end of each run of :ids (a JSON array) that is the child of a run not ended, put in
-- that parent's inbox under the waiting step's path (each child found by its key, its
-- parent by its key).
INSERT INTO inbox (run_id, wait_id, event_type, event_id, data, received_at)
SELECT child.parent_id, child.parent_step, 'child', child.id,
       json_object('status', child.status, 'exit', child.exit, 'result', json(child.result),
                   'error', json(child.error), 'run', child.id),
       :now
FROM runs AS child JOIN runs AS parent ON parent.id = child.parent_id
WHERE child.id IN (SELECT value FROM json_each(:ids)) AND child.parent_id IS NOT NULL
  AND parent.status IN ('held', 'pending', 'running', 'waiting')
RETURNING run_id

-- name: wake_parents
-- Wake the waiting runs of :ids (a JSON array): a child of theirs ended.
UPDATE runs SET due_at = :now
WHERE id IN (SELECT value FROM json_each(:ids)) AND status = 'waiting'
-- Pacing starts -----------------------------------------------------------------------------

-- name: lock_throttle_key
-- Serialises the turns of one flow's throttle key (BEGIN IMMEDIATE already does).
SELECT 1 AS locked

-- name: recent_throttle_turns
-- The latest :limit turns of a flow's throttle key, newest first (its primary key, backwards).
SELECT turn FROM throttle_turns WHERE flow = :flow AND key = :key
ORDER BY turn DESC LIMIT :limit

-- name: forget_throttle_turns
-- Turns at or before :before (older than the throttle's period) decide nothing any more.
DELETE FROM throttle_turns WHERE flow = :flow AND key = :key AND turn <= :before

-- name: insert_throttle_turn
INSERT INTO throttle_turns (flow, key, turn, run_id) VALUES (:flow, :key, :turn, :run_id)
ON CONFLICT DO NOTHING

-- name: lock_debounce_key
-- Serialises the events of one debounced trigger's key (BEGIN IMMEDIATE already does).
SELECT 1 AS locked

-- name: find_debounce
SELECT * FROM debounces WHERE trigger = :trigger AND key = :key

-- name: debounce_run
-- Gather an event into its burst's run: the last event's inputs and target, started later;
-- only while that run has not been claimed and its instant lies after the event.
UPDATE runs SET inputs = :inputs, target = :target, due_at = :due_at, updated_at = :now
WHERE id = :id AND status = 'pending' AND lease_owner IS NULL AND due_at > :received_at

-- name: save_debounce
INSERT INTO debounces (trigger, key, flow, run_id, first_at, last_at, fire_at, events)
VALUES (:trigger, :key, :flow, :run_id, :first_at, :last_at, :fire_at, :events)
ON CONFLICT (trigger, key) DO UPDATE SET
    flow = excluded.flow, run_id = excluded.run_id, first_at = excluded.first_at,
    last_at = excluded.last_at, fire_at = excluded.fire_at, events = excluded.events

-- name: pending_debounces
-- The bursts still to fire, soonest first (by their fire_at index).
SELECT * FROM debounces WHERE fire_at > :now ORDER BY fire_at LIMIT :limit

-- Slots of the PostgreSQL store: flow concurrency keys and step pools (see store/slotstore.py).

-- name: lock_slot_key
-- Serialises the slots of one key until the transaction ends.
SELECT pg_advisory_xact_lock(hashtextextended(%(key)s, 7)) IS NULL AS locked

-- name: slot_held
SELECT 1 AS held FROM slot_holders
WHERE key = %(key)s AND run_id = %(run_id)s AND holder = %(holder)s

-- name: count_slot_holders
SELECT count(*) AS taken FROM slot_holders WHERE key = %(key)s

-- name: slot_holders_of_key
-- The holders of one key, the earliest first (what a waiting run's document shows).
SELECT run_id, holder, taken_at FROM slot_holders WHERE key = %(key)s
ORDER BY taken_at, run_id LIMIT %(limit)s

-- name: take_slot
INSERT INTO slot_holders (key, run_id, holder, taken_at)
VALUES (%(key)s, %(run_id)s, %(holder)s, %(now)s)
ON CONFLICT (key, run_id, holder) DO NOTHING

-- name: give_slot_back
DELETE FROM slot_holders WHERE key = %(key)s AND run_id = %(run_id)s AND holder = %(holder)s

-- name: queue_for_slot
INSERT INTO slot_queue (key, run_id, holder, slot_limit, queued_at)
VALUES (%(key)s, %(run_id)s, %(holder)s, %(slot_limit)s, %(now)s)
ON CONFLICT (key, run_id, holder) DO NOTHING

-- name: slot_queue_place
-- The queue entry of one run (or step) for one key.
SELECT seq FROM slot_queue WHERE key = %(key)s AND run_id = %(run_id)s AND holder = %(holder)s

-- name: slot_queue_ahead
-- How many entries of the key's queue are older than %(seq)s.
SELECT count(*) AS ahead FROM slot_queue WHERE key = %(key)s AND seq < %(seq)s

-- name: slot_queue_length
SELECT count(*) AS queued FROM slot_queue WHERE key = %(key)s

-- name: slot_queue_head
-- The oldest entries of one key's queue, served first.
SELECT seq, run_id, holder, slot_limit FROM slot_queue WHERE key = %(key)s
ORDER BY seq LIMIT %(limit)s

-- name: leave_slot_queue
DELETE FROM slot_queue WHERE seq = %(seq)s

-- name: slot_keys_of_runs
-- Every key the runs of %(ids)s (a JSON array) hold a slot of or wait in the queue of.
SELECT key FROM slot_holders WHERE run_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))
UNION
SELECT key FROM slot_queue WHERE run_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))

-- name: release_slots_of_runs
-- Every slot the runs of %(ids)s hold, given back; the keys freed.
DELETE FROM slot_holders WHERE run_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))
RETURNING key

-- name: leave_slot_queues_of_runs
DELETE FROM slot_queue WHERE run_id = ANY (ARRAY(SELECT jsonb_array_elements_text(%(ids)s::jsonb)))

-- name: wake_for_slot
-- A waiting run whose turn came: due now (a run being advanced is woken by its checkpoint).
UPDATE runs SET due_at = %(now)s WHERE id = %(run_id)s AND status = 'waiting'

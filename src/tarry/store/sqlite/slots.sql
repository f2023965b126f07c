-- Slots of the SQLite store: flow concurrency keys and step pools (see store/slotstore.py).

-- name: lock_slot_key
-- Serialises the slots of one key: BEGIN IMMEDIATE already holds the write lock.
SELECT :key AS locked

-- name: slot_held
SELECT 1 AS held FROM slot_holders
WHERE key = :key AND run_id = :run_id AND holder = :holder

-- name: count_slot_holders
SELECT count(*) AS taken FROM slot_holders WHERE key = :key

-- name: slot_holders_of_key
-- The holders of one key, the earliest first (what a waiting run's document shows).
SELECT run_id, holder, taken_at FROM slot_holders WHERE key = :key
ORDER BY taken_at, run_id LIMIT :limit

-- name: take_slot
INSERT INTO slot_holders (key, run_id, holder, taken_at)
VALUES (:key, :run_id, :holder, :now)
ON CONFLICT (key, run_id, holder) DO NOTHING

-- name: give_slot_back
DELETE FROM slot_holders WHERE key = :key AND run_id = :run_id AND holder = :holder

-- name: queue_for_slot
INSERT INTO slot_queue (key, run_id, holder, slot_limit, queued_at)
VALUES (:key, :run_id, :holder, :slot_limit, :now)
ON CONFLICT (key, run_id, holder) DO NOTHING

-- name: slot_queue_place
-- The queue entry of one run (or step) for one key.
SELECT seq FROM slot_queue WHERE key = :key AND run_id = :run_id AND holder = :holder

-- name: slot_queue_ahead
-- How many entries of the key's queue are older than :seq.
SELECT count(*) AS ahead FROM slot_queue WHERE key = :key AND seq < :seq

-- name: slot_queue_length
SELECT count(*) AS queued FROM slot_queue WHERE key = :key

-- name: slot_queue_head
-- The oldest entries of one key's queue, served first.
SELECT seq, run_id, holder, slot_limit FROM slot_queue WHERE key = :key
ORDER BY seq LIMIT :limit

-- name: leave_slot_queue
DELETE FROM slot_queue WHERE seq = :seq

-- name: slot_keys_of_runs
-- Every key the runs of :ids (a JSON array) hold a slot of or wait in the queue of.
SELECT key FROM slot_holders WHERE run_id IN (SELECT value FROM json_each(:ids))
UNION
SELECT key FROM slot_queue WHERE run_id IN (SELECT value FROM json_each(:ids))

-- name: release_slots_of_runs
-- Every slot the runs of :ids hold, given back; the keys freed.
DELETE FROM slot_holders WHERE run_id IN (SELECT value FROM json_each(:ids))
RETURNING key

-- name: leave_slot_queues_of_runs
DELETE FROM slot_queue WHERE run_id IN (SELECT value FROM json_each(:ids))

-- name: wake_for_slot
-- A waiting run whose turn came: due now (a run being advanced is woken by its checkpoint).
UPDATE runs SET due_at = :now WHERE id = :run_id AND status = 'waiting'

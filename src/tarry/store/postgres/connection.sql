-- How the PostgreSQL store drives its connections (not part of the dialect-neutral set).

-- name: lock_migrations
-- Held until the migration's transaction ends: one migrating process at a time.
SELECT pg_advisory_xact_lock(hashtext('tarry schema migrations'))

-- name: lock_schema
-- Held by the session until unlock_schema: the schema's version is read and the database
-- migrated under it, so no process reads a half-migrated version.
SELECT pg_advisory_lock(hashtext('tarry schema migrations'))

-- name: unlock_schema
SELECT pg_advisory_unlock(hashtext('tarry schema migrations'))

-- name: listen
-- The channel the runs_notify_change trigger notifies (see the migrations).
LISTEN tarry_changes

-- name: commit_without_waiting_for_disk
-- A lease's commit need not wait for the WAL to reach the disk (SqlStore._transaction says
-- why that is safe); the first statement of its transaction.
SET LOCAL synchronous_commit TO off

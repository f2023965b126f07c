-- How the SQLite store drives its connection (not part of the dialect-neutral query set).

-- name: configure
-- The busy timeout is set when connecting. WAL lets readers work beside the one writer.
-- synchronous=FULL: COMMIT returns only once the WAL file is synced to disk, so what the
-- engine acknowledged survives a power loss or an OS crash, not only a crash of the process
-- (docs/durability.md). Group commit keeps the cost of the sync per batch of runs.
PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
PRAGMA foreign_keys = ON

-- name: commit_without_waiting_for_disk
-- Before a lease's transaction (SqlStore._transaction says why that is safe): its COMMIT
-- appends to the WAL file without syncing it. A later commit's sync covers these frames too.
PRAGMA synchronous = NORMAL

-- name: commit_waiting_for_disk
-- After it, back to what configure set.
PRAGMA synchronous = FULL

-- name: begin_read
BEGIN DEFERRED

-- name: begin_write
-- Take the write lock up front, so a transaction never fails half-way on a lock upgrade.
BEGIN IMMEDIATE

-- name: busy_timeout
-- How long a statement waits for another connection's lock, in SQLite's own busy handler.
-- A write runs with the handler off ({milliseconds} = 0), polling for its BEGIN IMMEDIATE
-- instead (SQLiteStore._begin_write); everything else waits in the handler. The setting is
-- changed only between a write and something else, not around every write.
PRAGMA busy_timeout = {milliseconds}

-- name: data_version
-- Changes whenever another connection commits to the database file.
PRAGMA data_version

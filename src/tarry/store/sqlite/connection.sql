-- How the SQLite store drives its connection (not part of the dialect-neutral query set).

-- name: configure
-- The busy timeout is set when connecting. WAL lets readers work beside the one writer.
-- synchronous=NORMAL in WAL mode is durable against a crash of the process (a commit is in
-- the WAL file before COMMIT returns); only a power loss or an OS crash may drop the last
-- commits, and never corrupts the file.
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
PRAGMA foreign_keys = ON

-- name: begin_read
BEGIN DEFERRED

-- name: begin_write
-- Take the write lock up front, so a transaction never fails half-way on a lock upgrade.
BEGIN IMMEDIATE

-- name: data_version
-- Changes whenever another connection commits to the database file.
PRAGMA data_version

-- A list of runs of any status is read per status, from the (status, created_at) index, and
-- the pages merged; a list of events in any state likewise, per state. The indexes on
-- created_at and on received_at alone go: a start then writes one index entry fewer, and so
-- does an event sent (in SQLite's write-ahead log, one page fewer each).
DROP INDEX runs_created;
DROP INDEX events_received;

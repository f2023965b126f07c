-- How many times in a row a run was taken over after its worker died mid-run (its lease
-- lapsed while it was running) without a checkpoint since: a worker that begins executing a
-- run it took over adds one, a checkpoint resets it. A run that kills every worker that runs it (a segfault, os._exit)
-- is failed as crashed once this passes [limits] recovery_max, instead of re-run forever.
ALTER TABLE runs ADD COLUMN recoveries INTEGER NOT NULL DEFAULT 0;

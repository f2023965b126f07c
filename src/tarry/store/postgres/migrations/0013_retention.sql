-- Retention (tarry.toml [retention]) deletes ended runs oldest end first, a short batch at a
-- time: ended runs by the instant they ended (their last update), in an index of ended runs
-- only. A run's rows in other tables go with it (ON DELETE CASCADE), so the tables that
-- reference a run get an index on the reference where they had none that serves it (a
-- partial index does not).
-- Settled events are found by (state, received_at), an index that exists.
CREATE INDEX runs_ended ON runs (updated_at)
    WHERE status IN ('succeeded', 'failed', 'cancelled', 'refused');
-- A run's tasks, open or not (the cascade), and its open ones (a claim, a checkpoint): one
-- index serves both, in place of the one of open tasks only.
DROP INDEX tasks_open_run;
CREATE INDEX tasks_run ON tasks (run_id, state);
CREATE INDEX schedule_occurrences_run ON schedule_occurrences (run_id);

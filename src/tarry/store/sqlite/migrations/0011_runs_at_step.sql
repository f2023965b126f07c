-- Where each run is in its flow (the step it waits at, else the one it failed at, without loop
-- indices), so that a flow's drawing counts its runs per step from one index: waiting, held,
-- running and failed runs only, the statuses the drawing shows.
ALTER TABLE runs ADD COLUMN at_step TEXT;
CREATE INDEX runs_at_step ON runs (flow, at_step, status)
    WHERE status IN ('waiting', 'held', 'running', 'failed');

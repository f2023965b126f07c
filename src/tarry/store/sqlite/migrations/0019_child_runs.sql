-- Child flows. A child run names its parent and the parent's step that waits for it
-- (parent_step, the wait's id), so the transaction that ends the child finds the waiting
-- parent by its key; a parent's children are found from it (cancel cascades, the run
-- document's links); few runs are children, so the index holds only those.
ALTER TABLE runs ADD COLUMN parent_id TEXT;
ALTER TABLE runs ADD COLUMN parent_step TEXT;
CREATE INDEX runs_parent ON runs (parent_id) WHERE parent_id IS NOT NULL;

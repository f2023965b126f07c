-- Continue-as-new. A run started by another that continued as new names it (continued_from),
-- so the ended run's successor is found from it; few runs continue, so the index holds only
-- those.
ALTER TABLE runs ADD COLUMN continued_from TEXT;
CREATE INDEX runs_continued_from ON runs (continued_from) WHERE continued_from IS NOT NULL;

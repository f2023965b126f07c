-- Nothing to change on SQLite: a task's form is TEXT, kept exactly as written, so its fields
-- keep the order the flow lists them. PostgreSQL's 0008 turns its jsonb column into json for
-- the same guarantee; this file keeps both stores at the same schema version.
SELECT 1;

-- A task's form is kept as the JSON text it was written in (json, not jsonb): the dashboard
-- draws a field per property in the order the flow lists them, and jsonb keeps an object's
-- keys in an order of its own. A form stored before this migration keeps the order jsonb
-- gave it; nothing reads the form with jsonb operators.

ALTER TABLE tasks ALTER COLUMN form TYPE JSON USING form::json;

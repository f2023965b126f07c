-- A wait settled by its first event (no accept: a race has one winner) says so in the event
-- index; a wait registered before takes every reply, as it did.
ALTER TABLE event_waits ADD COLUMN first_wins BOOLEAN NOT NULL DEFAULT false;

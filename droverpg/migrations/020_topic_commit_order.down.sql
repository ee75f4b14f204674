-- Back to positions (xid, id) read below the MVCC horizon. Committed
-- messages are sequenced first; the rest (none can be in flight: the
-- UPDATE waits for their publishers) get their publisher's xid back.
SELECT {schema}topic_sequence(2147483647);
DROP VIEW {schema}topic_publishers;
DROP FUNCTION {schema}topic_sequence(integer);
DROP TABLE {schema}topic_sequencer;
DROP INDEX {schema}topic_messages_unsequenced_idx;
UPDATE {schema}topic_messages SET xid = -xid WHERE xid < 0;
ALTER TABLE {schema}topic_messages ALTER COLUMN xid SET DEFAULT pg_current_xact_id()::text::bigint;

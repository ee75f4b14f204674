-- Per-lane ordinals of topic messages; see the PostgreSQL migration of the
-- same number. On SQLite a message's position is its id (one writer at a
-- time), so the publish gives each message the next ordinal of its lane
-- in the same statement; the messages stored before get theirs here, so
-- that a store upgraded with a backlog reports its lag as before.
ALTER TABLE {schema}topic_messages ADD COLUMN ord INTEGER;

UPDATE {schema}topic_messages AS m SET ord = o.ord
FROM (SELECT id, row_number() OVER (PARTITION BY topic, lane ORDER BY xid, id) AS ord
      FROM {schema}topic_messages) AS o
WHERE m.id = o.id;

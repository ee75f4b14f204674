-- Topic consumers; see the PostgreSQL migration of the same number. Times
-- are microseconds since the epoch, as elsewhere in this schema.
ALTER TABLE {schema}topic_lanes ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE {schema}topic_lanes ADD COLUMN batch_to_xid INTEGER;
ALTER TABLE {schema}topic_lanes ADD COLUMN batch_to_id INTEGER;
ALTER TABLE {schema}topic_lanes ADD COLUMN batch_limit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE {schema}topic_lanes ADD COLUMN waiting_owner TEXT;
ALTER TABLE {schema}topic_lanes ADD COLUMN waiting_until INTEGER;

CREATE TABLE {schema}topic_receipt_key (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    secret     BLOB    NOT NULL,
    created_at INTEGER NOT NULL
);

-- Topics; see the PostgreSQL migration of the same number. SQLite runs one
-- writer at a time and ids are taken inside the write transaction, so id
-- order is commit order: xid stays 0 and (xid, id) orders by id alone.
-- Foreign keys are off in SQLite unless asked for, so SubscriptionDelete
-- deletes the lanes itself.
CREATE TABLE {schema}topics (
    name         TEXT    PRIMARY KEY,
    lanes        INTEGER NOT NULL CHECK (lanes BETWEEN 1 AND 1024),
    retention_ms INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL
);

CREATE TABLE {schema}topic_messages (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    topic      TEXT    NOT NULL,
    lane       INTEGER NOT NULL,
    xid        INTEGER NOT NULL DEFAULT 0,
    key        TEXT,
    payload    BLOB    NOT NULL,
    metadata   TEXT    NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL
);
CREATE INDEX {schema}topic_messages_read_idx ON {schema}topic_messages (topic, lane, xid, id);

CREATE TABLE {schema}topic_subscriptions (
    topic        TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    max_attempts INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (topic, name)
);

CREATE TABLE {schema}topic_lanes (
    topic            TEXT    NOT NULL,
    subscription     TEXT    NOT NULL,
    lane             INTEGER NOT NULL,
    cursor_xid       INTEGER NOT NULL DEFAULT 0,
    cursor_id        INTEGER NOT NULL DEFAULT 0,
    lease_owner      TEXT,
    lease_token      BLOB,
    lease_expires_at INTEGER,
    PRIMARY KEY (topic, subscription, lane)
) WITHOUT ROWID;

-- The bulk actions of drover serve; see the PostgreSQL migration of the
-- same number. Times are unix microseconds; AUTOINCREMENT, so that an ID
-- is never handed out twice once older tasks are deleted.
CREATE TABLE {schema}bulk_tasks (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    action     TEXT    NOT NULL,
    queue      TEXT    NOT NULL DEFAULT '',
    kind       TEXT    NOT NULL DEFAULT '',
    state      TEXT    NOT NULL DEFAULT '',
    selected   INTEGER NOT NULL DEFAULT 0,
    status     TEXT    NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
    matched    INTEGER NOT NULL DEFAULT 0,
    changed    INTEGER NOT NULL DEFAULT 0,
    error      TEXT    NOT NULL DEFAULT '',
    started_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

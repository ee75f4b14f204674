-- Periodic (cron) jobs defined through the API, and the Go-configured ones
-- their leader registers; see the PostgreSQL migration of the same number.
-- tags is a JSON array, times unix microseconds.
CREATE TABLE {schema}periodic_jobs (
    name         TEXT    PRIMARY KEY,
    schedule     TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    args         TEXT    NOT NULL DEFAULT '{}',
    queue        TEXT    NOT NULL,
    priority     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 0,
    tags         TEXT    NOT NULL DEFAULT '[]',
    source       TEXT    NOT NULL CHECK (source IN ('api', 'config')),
    paused       INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
) WITHOUT ROWID;

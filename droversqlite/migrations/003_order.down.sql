-- Undoes 003_order: drops ordering keys, unique keys and queue limits.
-- Jobs blocked behind earlier jobs of their key become available. The job
-- table is rebuilt as 002 made it (SQLite cannot change a CHECK in place).
DROP TABLE {schema}queue_limits;

CREATE TABLE {schema}jobs_new (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    state            TEXT    NOT NULL DEFAULT 'available' CHECK (state IN ('available', 'pending', 'running')),
    queue            TEXT    NOT NULL,
    kind             TEXT    NOT NULL,
    priority         INTEGER NOT NULL DEFAULT 0,
    attempt          INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL,
    timeout_ms       INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    run_at           INTEGER NOT NULL,
    attempted_at     INTEGER,
    lease_owner      TEXT,
    lease_expires_at INTEGER,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    tags             TEXT    NOT NULL DEFAULT '[]',
    metadata         TEXT    NOT NULL DEFAULT '{}',
    errors           TEXT,
    args             TEXT    NOT NULL,
    batch_id         INTEGER,
    flow             INTEGER NOT NULL DEFAULT 0,
    waiting_on       INTEGER NOT NULL DEFAULT 0
);
INSERT INTO {schema}jobs_new (id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at,
    attempted_at, lease_owner, lease_expires_at, cancel_requested, tags, metadata, errors, args,
    batch_id, flow, waiting_on)
SELECT id, CASE WHEN state = 'blocked' THEN 'available' ELSE state END, queue, kind, priority, attempt, max_attempts,
    timeout_ms, created_at, run_at, attempted_at, lease_owner, lease_expires_at, cancel_requested, tags, metadata, errors, args,
    batch_id, flow, waiting_on
FROM {schema}jobs;
DELETE FROM sqlite_sequence WHERE name = '{schema}jobs_new';
INSERT INTO sqlite_sequence (name, seq)
SELECT '{schema}jobs_new', max(seq) FROM sqlite_sequence WHERE name = '{schema}jobs' HAVING count(*) > 0;
DROP TABLE {schema}jobs;
ALTER TABLE {schema}jobs_new RENAME TO {schema}jobs;
CREATE INDEX {schema}jobs_claim_idx ON {schema}jobs (queue, priority, run_at, id) WHERE state = 'available';
CREATE INDEX {schema}jobs_batch_idx ON {schema}jobs (batch_id, state)
    WHERE batch_id IS NOT NULL AND flow & 1 = 1 AND (state = 'running' OR attempt > 0);

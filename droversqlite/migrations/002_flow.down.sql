-- Undoes 002_flow: drops workflows and batches. Jobs still waiting on
-- parents become available, since the schema before knows no waiting.
-- SQLite cannot change a CHECK constraint in place, so the job table is
-- rebuilt as 001 made it, keeping its AUTOINCREMENT position.
DROP TABLE {schema}job_deps;
DROP TABLE {schema}batches;
DROP INDEX {schema}finished_jobs_batch_idx;
ALTER TABLE {schema}finished_jobs DROP COLUMN result;
ALTER TABLE {schema}finished_jobs DROP COLUMN flow;
ALTER TABLE {schema}finished_jobs DROP COLUMN batch_id;

CREATE TABLE {schema}jobs_new (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    state            TEXT    NOT NULL DEFAULT 'available' CHECK (state IN ('available', 'running')),
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
    args             TEXT    NOT NULL
);
INSERT INTO {schema}jobs_new (id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at,
    attempted_at, lease_owner, lease_expires_at, cancel_requested, tags, metadata, errors, args)
SELECT id, CASE WHEN state = 'pending' THEN 'available' ELSE state END, queue, kind, priority, attempt, max_attempts,
    timeout_ms, created_at, run_at, attempted_at, lease_owner, lease_expires_at, cancel_requested, tags, metadata, errors, args
FROM {schema}jobs;
DELETE FROM sqlite_sequence WHERE name = '{schema}jobs_new';
INSERT INTO sqlite_sequence (name, seq)
SELECT '{schema}jobs_new', max(seq) FROM sqlite_sequence WHERE name = '{schema}jobs' HAVING count(*) > 0;
DROP TABLE {schema}jobs;
ALTER TABLE {schema}jobs_new RENAME TO {schema}jobs;
CREATE INDEX {schema}jobs_claim_idx ON {schema}jobs (queue, priority, run_at, id) WHERE state = 'available';

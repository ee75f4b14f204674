-- Undoes 007_state_checks: the job tables get back their state checks as
-- IN lists, rebuilt as migrations 003 and 005 left them.
CREATE TABLE {schema}jobs_new (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    state            TEXT    NOT NULL DEFAULT 'available' CHECK (state IN ('available', 'pending', 'blocked', 'running')),
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
    waiting_on       INTEGER NOT NULL DEFAULT 0,
    ordering_key     TEXT,
    key_limit        INTEGER NOT NULL DEFAULT 0,
    limited          INTEGER NOT NULL DEFAULT 0,
    part             INTEGER NOT NULL GENERATED ALWAYS AS (id % 16) VIRTUAL
);
INSERT INTO {schema}jobs_new (id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at,
    attempted_at, lease_owner, lease_expires_at, cancel_requested, tags, metadata, errors, args,
    batch_id, flow, waiting_on, ordering_key, key_limit, limited)
SELECT id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at,
    attempted_at, lease_owner, lease_expires_at, cancel_requested, tags, metadata, errors, args,
    batch_id, flow, waiting_on, ordering_key, key_limit, limited
FROM {schema}jobs;
DELETE FROM sqlite_sequence WHERE name = '{schema}jobs_new';
INSERT INTO sqlite_sequence (name, seq)
SELECT '{schema}jobs_new', max(seq) FROM sqlite_sequence WHERE name = '{schema}jobs' HAVING count(*) > 0;
DROP TABLE {schema}jobs;
ALTER TABLE {schema}jobs_new RENAME TO {schema}jobs;
CREATE INDEX {schema}jobs_claim_idx ON {schema}jobs (queue, priority, run_at, id) WHERE state = 'available';
CREATE INDEX {schema}jobs_batch_idx ON {schema}jobs (batch_id, state)
    WHERE batch_id IS NOT NULL AND flow & 1 = 1 AND (state = 'running' OR attempt > 0);
CREATE INDEX {schema}jobs_key_idx ON {schema}jobs (queue, ordering_key, state, id) WHERE ordering_key IS NOT NULL;
CREATE INDEX {schema}jobs_limited_idx ON {schema}jobs (queue) WHERE limited = 1 AND state = 'running';

CREATE TABLE {schema}finished_jobs_new (
    id               INTEGER PRIMARY KEY,
    state            TEXT    NOT NULL CHECK (state IN ('completed', 'cancelled', 'discarded')),
    queue            TEXT    NOT NULL,
    kind             TEXT    NOT NULL,
    priority         INTEGER NOT NULL,
    attempt          INTEGER NOT NULL,
    max_attempts     INTEGER NOT NULL,
    timeout_ms       INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    run_at           INTEGER NOT NULL,
    attempted_at     INTEGER,
    finalized_at     INTEGER NOT NULL,
    tags             TEXT    NOT NULL,
    metadata         TEXT    NOT NULL,
    errors           TEXT,
    args             TEXT    NOT NULL,
    batch_id         INTEGER,
    flow             INTEGER NOT NULL DEFAULT 0,
    result           TEXT,
    ordering_key     TEXT,
    key_limit        INTEGER NOT NULL DEFAULT 0
);
INSERT INTO {schema}finished_jobs_new SELECT * FROM {schema}finished_jobs;
DROP TABLE {schema}finished_jobs;
ALTER TABLE {schema}finished_jobs_new RENAME TO {schema}finished_jobs;
CREATE INDEX {schema}finished_jobs_prune_idx ON {schema}finished_jobs (state, finalized_at);
CREATE INDEX {schema}finished_jobs_batch_idx ON {schema}finished_jobs (batch_id, id) WHERE batch_id IS NOT NULL;

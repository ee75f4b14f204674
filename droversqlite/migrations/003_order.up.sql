-- Keyed jobs (per-key FIFO and per-key concurrency) and unique jobs; see
-- the PostgreSQL migration of the same number for the design.
--
-- SQLite cannot alter a CHECK constraint, and the hot table's state check
-- must admit 'blocked' (besides migration 002's 'pending'), so the table is
-- rebuilt the way SQLite documents
-- (create, copy, drop, rename) inside the migration's transaction. The
-- AUTOINCREMENT counter is carried over: the old table's counter may be
-- above its highest remaining ID (finished jobs left from the end), and
-- those IDs must not be handed out again.
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
    unique_key       TEXT,
    limited          INTEGER NOT NULL DEFAULT 0
);

INSERT INTO {schema}jobs_new (id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at,
    attempted_at, lease_owner, lease_expires_at, cancel_requested, tags, metadata, errors, args,
    batch_id, flow, waiting_on)
SELECT id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at,
    attempted_at, lease_owner, lease_expires_at, cancel_requested, tags, metadata, errors, args,
    batch_id, flow, waiting_on
FROM {schema}jobs;

DELETE FROM sqlite_sequence WHERE name = '{schema}jobs_new';
INSERT INTO sqlite_sequence (name, seq)
SELECT '{schema}jobs_new', max(seq) FROM sqlite_sequence WHERE name = '{schema}jobs' HAVING count(*) > 0;

DROP TABLE {schema}jobs;
ALTER TABLE {schema}jobs_new RENAME TO {schema}jobs;

CREATE INDEX {schema}jobs_claim_idx ON {schema}jobs (queue, priority, run_at, id) WHERE state = 'available';

-- Migration 002's index went with the old table.
CREATE INDEX {schema}jobs_batch_idx ON {schema}jobs (batch_id, state)
    WHERE batch_id IS NOT NULL AND flow & 1 = 1 AND (state = 'running' OR attempt > 0);

-- A key's active count and its next blocked job; plain jobs (no key) stay
-- out of this index.
CREATE INDEX {schema}jobs_key_idx ON {schema}jobs (queue, ordering_key, state, id) WHERE ordering_key IS NOT NULL;

-- Uniqueness among unfinished jobs, enforced by the index.
CREATE UNIQUE INDEX {schema}jobs_unique_idx ON {schema}jobs (unique_key) WHERE unique_key IS NOT NULL;

-- Cluster-wide limits of a queue and the marked rows of limited claims;
-- see the PostgreSQL migration.
CREATE TABLE {schema}queue_limits (
    queue       TEXT    PRIMARY KEY,
    max_running INTEGER NOT NULL DEFAULT 0,
    rate        INTEGER NOT NULL DEFAULT 0,
    period_ms   INTEGER NOT NULL DEFAULT 0,
    tokens      REAL    NOT NULL DEFAULT 0,
    refilled_at INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE INDEX {schema}jobs_limited_idx ON {schema}jobs (queue) WHERE limited = 1 AND state = 'running';

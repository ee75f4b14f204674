-- SQLite has no schemas, so "{schema}" becomes a table prefix ("drover_").
-- Times are INTEGER unix microseconds (UTC): they compare and sort exactly,
-- index compactly and convert to time.Time without parsing text, at the same
-- precision PostgreSQL keeps. JSON columns are TEXT so that the sqlite3 shell
-- shows them as written; booleans are INTEGER 0/1.

-- The hot table: only jobs that can still run live here (available, scheduled
-- and retryable rows are all state 'available', told apart by run_at and
-- attempt; running rows hold a lease). Finished jobs move to finished_jobs in
-- the transaction that finishes them, so the claim index only ever covers
-- work that is waiting.
--
-- AUTOINCREMENT matters: without it SQLite may hand out the ID of a row that
-- was deleted from the end of the table, and finished jobs leave this table
-- all the time, so an ID could be given to a second job while the first
-- still sits in finished_jobs.
CREATE TABLE {schema}jobs (
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

-- Matches the claim query exactly: equality on queue, then its ORDER BY, over
-- waiting rows only. Future run_at values sort after the claimable ones of
-- the same priority, so a claim stops as soon as it has its batch.
CREATE INDEX {schema}jobs_claim_idx ON {schema}jobs (queue, priority, run_at, id) WHERE state = 'available';

-- No index on running rows or lease expiry: heartbeats rewrite
-- lease_expires_at of every running job, and every index on it would be
-- rewritten too (measured: 8% of burn-down throughput). The rescuer scans
-- the hot table, which is small by design, once per rescue interval.

-- Finished jobs, kept for inspection until the pruner removes them. Rows
-- arrive with the ID they had in the hot table.
CREATE TABLE {schema}finished_jobs (
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
    args             TEXT    NOT NULL
);

CREATE INDEX {schema}finished_jobs_prune_idx ON {schema}finished_jobs (state, finalized_at);

-- One row per singleton role (maintenance leader); whoever holds an
-- unexpired row holds the role.
CREATE TABLE {schema}leaders (
    name       TEXT    PRIMARY KEY,
    leader_id  TEXT    NOT NULL,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;

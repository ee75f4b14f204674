-- Workflows and batches (see docs/workflows.md and docs/batches.md).
--
-- A job that waits for other jobs sits in the hot table as 'pending', a state
-- outside the claim index's predicate, so waiting jobs cost claims nothing;
-- waiting_on counts the parents (or, for a batch callback, the batch) it
-- still waits for. flow marks what finishing a job must also do, so that
-- plain jobs (flow = 0) skip it entirely:
--   1  the job is a member of batch_id: its end is counted on the batch row
--   2  the job has dependants: its end releases or cancels them
--   4  the job is released, not cancelled, when a parent does not complete
--
-- SQLite cannot change a CHECK constraint in place, so the hot table is
-- rebuilt with the new state. Its AUTOINCREMENT counter is carried over:
-- finished jobs keep IDs the new table must never hand out again.
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
    attempted_at, lease_owner, lease_expires_at, cancel_requested, tags, metadata, errors, args)
SELECT id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at,
    attempted_at, lease_owner, lease_expires_at, cancel_requested, tags, metadata, errors, args
FROM {schema}jobs;

DELETE FROM sqlite_sequence WHERE name = '{schema}jobs_new';
INSERT INTO sqlite_sequence (name, seq)
SELECT '{schema}jobs_new', seq FROM sqlite_sequence WHERE name = '{schema}jobs';

DROP TABLE {schema}jobs;
ALTER TABLE {schema}jobs_new RENAME TO {schema}jobs;

CREATE INDEX {schema}jobs_claim_idx ON {schema}jobs (queue, priority, run_at, id) WHERE state = 'available';

-- Batch progress reads the running and retrying members of one batch from
-- here, never scanning the batch's other rows; plain jobs are not in it.
CREATE INDEX {schema}jobs_batch_idx ON {schema}jobs (batch_id, state)
    WHERE batch_id IS NOT NULL AND flow & 1 = 1 AND (state = 'running' OR attempt > 0);

-- result is what the worker set with Job.SetResult, stored by the
-- transaction that completes the job.
ALTER TABLE {schema}finished_jobs ADD COLUMN batch_id INTEGER;
ALTER TABLE {schema}finished_jobs ADD COLUMN flow INTEGER NOT NULL DEFAULT 0;
ALTER TABLE {schema}finished_jobs ADD COLUMN result TEXT;

-- Streams a batch's results in ID order.
CREATE INDEX {schema}finished_jobs_batch_idx ON {schema}finished_jobs (batch_id, id) WHERE batch_id IS NOT NULL;

-- One row per batch. The counters are updated in the transaction that
-- finishes each member, so progress is one row read whatever the batch's
-- size. callback_job_id is a pending job released by the transaction that
-- counts the batch's last member.
CREATE TABLE {schema}batches (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    total           INTEGER NOT NULL DEFAULT 0,
    completed       INTEGER NOT NULL DEFAULT 0,
    cancelled       INTEGER NOT NULL DEFAULT 0,
    discarded       INTEGER NOT NULL DEFAULT 0,
    callback_job_id INTEGER,
    created_at      INTEGER NOT NULL,
    finished_at     INTEGER
);

-- Edges of workflows: child_id runs once parent_id completed. Kept after
-- both finish so that a child can read its parents' results.
CREATE TABLE {schema}job_deps (
    parent_id INTEGER NOT NULL,
    child_id  INTEGER NOT NULL,
    PRIMARY KEY (parent_id, child_id)
) WITHOUT ROWID;
CREATE INDEX {schema}job_deps_child_idx ON {schema}job_deps (child_id);

-- Keyed jobs (per-key FIFO and per-key concurrency) and unique jobs.
--
-- A keyed job carries ordering_key and key_limit: at most key_limit jobs of
-- one (queue, ordering_key) are available or running at once. The others
-- wait in state 'blocked', which the claim index's predicate (state =
-- 'available') leaves out, so a long backlog of one key costs claims of
-- other keys nothing. The statement that finishes a keyed job promotes the
-- oldest blocked job of its key. Plain jobs have a NULL ordering_key and
-- never enter the key index.
ALTER TABLE {schema}jobs
    ADD COLUMN ordering_key text,
    ADD COLUMN key_limit    integer NOT NULL DEFAULT 0,
    ADD COLUMN unique_key   text;

ALTER TABLE {schema}jobs DROP CONSTRAINT jobs_state_check;
-- 'pending' is migration 002's (workflows and batches): both kinds of
-- waiting job live in the hot table, outside the claim index.
ALTER TABLE {schema}jobs ADD CONSTRAINT jobs_state_check CHECK (state IN ('available', 'pending', 'blocked', 'running'));

-- Serves the two questions keyed inserts and promotions ask of one key: how
-- many of its jobs are active (state available or running) and which
-- blocked job is next (lowest id).
CREATE INDEX jobs_key_idx ON {schema}jobs (queue, ordering_key, state, id) WHERE ordering_key IS NOT NULL;

-- Uniqueness is the index's: two inserts of the same unique key cannot both
-- succeed, whatever their timing. The key leaves with the job when it
-- finishes, so uniqueness holds among unfinished jobs.
CREATE UNIQUE INDEX jobs_unique_idx ON {schema}jobs (unique_key) WHERE unique_key IS NOT NULL;

-- Cluster-wide limits of a queue (QueueConfig.GlobalMaxWorkers, RateLimit).
-- One row per limited queue, written by the claims of the clients that
-- configure it: the limits and the rate limit's token bucket (refilled at
-- rate per period_ms, up to rate). A limited claim locks the row, so the
-- queue's limited claims take turns; other queues never touch it.
CREATE TABLE {schema}queue_limits (
    queue       text             PRIMARY KEY,
    max_running integer          NOT NULL DEFAULT 0,
    rate        integer          NOT NULL DEFAULT 0,
    period_ms   bigint           NOT NULL DEFAULT 0,
    tokens      double precision NOT NULL DEFAULT 0,
    refilled_at timestamptz      NOT NULL DEFAULT now()
);

-- A limited claim marks the rows it claims, and counts the queue's marked
-- rows that are running from this index; rows that finish or stop running
-- leave it, so no counter has to follow them. Plain rows never enter it.
-- Heartbeats change neither column of the predicate, so their updates stay
-- HOT.
ALTER TABLE {schema}jobs ADD COLUMN limited boolean NOT NULL DEFAULT false;
CREATE INDEX jobs_limited_idx ON {schema}jobs (queue) WHERE limited AND state = 'running';

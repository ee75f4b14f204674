-- Keyed jobs, continued (issue 7): what a key needs beyond migration 003.
--
-- Finished jobs keep their key and key limit, so that JobRetry of a
-- finished keyed job returns it to its key (blocked behind the key's
-- active jobs when the key is full) instead of as a plain job that would
-- run beside them. Plain jobs store NULL and the default: adding the
-- columns rewrites nothing.
ALTER TABLE {schema}finished_jobs
    ADD COLUMN ordering_key text,
    ADD COLUMN key_limit    integer NOT NULL DEFAULT 0;

-- Per-key rate limits (InsertOpts.KeyRate): one token bucket per (queue,
-- ordering key) that has a rate, refilled at rate per period_ms up to rate.
-- A keyed insert with KeyRate writes the rate here; a key with a row here
-- has its jobs made available by KeyPromote only, which spends a token per
-- job and schedules a job without a token for the time its token will
-- exist (tokens then go negative: they are reserved). Claims never read
-- this table, and plain jobs never touch it. The promotion sweep deletes
-- the rows of keys with no unfinished job once their bucket is full again.
CREATE TABLE {schema}key_rates (
    queue        text             NOT NULL,
    ordering_key text             NOT NULL,
    rate         integer          NOT NULL,
    period_ms    bigint           NOT NULL,
    tokens       double precision NOT NULL,
    refilled_at  timestamptz      NOT NULL,
    PRIMARY KEY (queue, ordering_key)
);

-- The last tick inserted per periodic job (PeriodicJob.MissedTicks), kept
-- in the store so that a new leader, in any process, knows which ticks
-- passed while no leader ran. One row per periodic job name, written once
-- per tick.
CREATE TABLE {schema}periodic_ticks (
    name text        PRIMARY KEY,
    tick timestamptz NOT NULL
);

-- Unique keys that outlive their jobs' unfinished life (InsertOpts.UniqueStates).
--
-- Migration 003 kept unique_key on the hot table under a unique partial
-- index, so a key was free as soon as its job moved to finished_jobs.
-- Keys now live in a table of their own, one row per unique job: the
-- unique index covers held keys only, a key is held from the insert that
-- stores the job until the transaction that ends the job in a final state
-- outside final_states, and the row stays (not held) until the pruner
-- removes the job, so that retrying the job by hand can take its key
-- again. One table, one index: the hot table no longer carries keys.
--
-- final_states holds bits of the final states in which the job keeps its
-- key: 1 completed, 2 cancelled, 4 discarded. Unique jobs carry flow bit 8
-- (on the hot row and, once finished, on finished_jobs), which the claim
-- returns with the other flow bits: only results of such jobs take the
-- statement that frees keys, and only such finished rows make the pruner
-- delete keys.
CREATE TABLE {schema}unique_keys (
    job_id       bigint   PRIMARY KEY,
    unique_key   text     NOT NULL,
    final_states smallint NOT NULL DEFAULT 0,
    held         boolean  NOT NULL DEFAULT true
);

-- Two inserts of one held key cannot both succeed, whatever their timing:
-- the second waits for the first to commit or roll back, then skips its
-- row (ON CONFLICT DO NOTHING). Freeing a key takes its row out of this
-- index, so a key freed by a finish is free to the insert that waited on
-- it.
CREATE UNIQUE INDEX unique_keys_held_idx ON {schema}unique_keys (unique_key) WHERE held;

INSERT INTO {schema}unique_keys (job_id, unique_key)
SELECT id, unique_key FROM {schema}jobs WHERE unique_key IS NOT NULL;
UPDATE {schema}jobs SET flow = flow | 8 WHERE unique_key IS NOT NULL;

DROP INDEX {schema}jobs_unique_idx;
ALTER TABLE {schema}jobs DROP COLUMN unique_key;

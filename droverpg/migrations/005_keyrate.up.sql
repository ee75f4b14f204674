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

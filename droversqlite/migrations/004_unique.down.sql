-- Undoes 004_unique: unique keys go back to a column of the job table.
-- Keys held by finished jobs (unique_states) are given up, since the
-- schema before cannot hold them.
ALTER TABLE {schema}jobs ADD COLUMN unique_key TEXT;
UPDATE {schema}jobs SET unique_key = (
    SELECT u.unique_key FROM {schema}unique_keys u WHERE u.job_id = {schema}jobs.id AND u.held
);
UPDATE {schema}jobs SET flow = flow & ~8 WHERE flow & 8 = 8;
UPDATE {schema}finished_jobs SET flow = flow & ~8 WHERE flow & 8 = 8;
CREATE UNIQUE INDEX {schema}jobs_unique_idx ON {schema}jobs (unique_key) WHERE unique_key IS NOT NULL;
DROP TABLE {schema}unique_keys;

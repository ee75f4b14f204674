-- Undoes 003_order: drops ordering keys, unique keys and queue limits.
-- Jobs blocked behind earlier jobs of their key become available.
DROP INDEX {schema}jobs_limited_idx;
ALTER TABLE {schema}jobs DROP COLUMN limited;
DROP TABLE {schema}queue_limits;
DROP INDEX {schema}jobs_unique_idx;
DROP INDEX {schema}jobs_key_idx;
ALTER TABLE {schema}jobs DROP CONSTRAINT jobs_state_check;
UPDATE {schema}jobs SET state = 'available' WHERE state = 'blocked';
ALTER TABLE {schema}jobs ADD CONSTRAINT jobs_state_check CHECK (state IN ('available', 'pending', 'running'));
ALTER TABLE {schema}jobs
    DROP COLUMN ordering_key,
    DROP COLUMN key_limit,
    DROP COLUMN unique_key;

-- Undoes 002_flow: drops workflows and batches. Jobs still waiting on
-- parents become available, since the schema before knows no waiting.
DROP TABLE {schema}job_deps;
DROP TABLE {schema}batches;
DROP INDEX {schema}finished_jobs_batch_idx;
ALTER TABLE {schema}finished_jobs
    DROP COLUMN batch_id,
    DROP COLUMN flow,
    DROP COLUMN result;
DROP INDEX {schema}jobs_batch_idx;
ALTER TABLE {schema}jobs ALTER COLUMN state SET STATISTICS -1;
ALTER TABLE {schema}jobs
    DROP COLUMN batch_id,
    DROP COLUMN flow,
    DROP COLUMN waiting_on;
ALTER TABLE {schema}jobs DROP CONSTRAINT jobs_state_check;
UPDATE {schema}jobs SET state = 'available' WHERE state = 'pending';
ALTER TABLE {schema}jobs ADD CONSTRAINT jobs_state_check CHECK (state IN ('available', 'running'));

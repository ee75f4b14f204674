ALTER TABLE {schema}workers DROP COLUMN kinds;
DROP INDEX {schema}finished_jobs_failed_idx;
DROP INDEX {schema}finished_jobs_kind_idx;
DROP INDEX {schema}finished_jobs_queue_idx;

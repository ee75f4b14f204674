DROP INDEX {schema}jobs_running_idx;
CREATE INDEX jobs_running_idx ON {schema}jobs (lease_owner) WHERE state = 'running';

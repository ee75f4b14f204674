DROP INDEX {schema}jobs_running_idx;

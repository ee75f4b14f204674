-- Keyed jobs, continued; see the PostgreSQL migration of the same number.
ALTER TABLE {schema}finished_jobs ADD COLUMN ordering_key TEXT;
ALTER TABLE {schema}finished_jobs ADD COLUMN key_limit INTEGER NOT NULL DEFAULT 0;

-- Unique keys that outlive their jobs' unfinished life; see the PostgreSQL
-- migration of the same number for the design. held is 1 while the job
-- holds its key; final_states holds the bits of the final states in which
-- it keeps it (1 completed, 2 cancelled, 4 discarded).
CREATE TABLE {schema}unique_keys (
    job_id       INTEGER PRIMARY KEY,
    unique_key   TEXT    NOT NULL,
    final_states INTEGER NOT NULL DEFAULT 0,
    held         INTEGER NOT NULL DEFAULT 1
);

CREATE UNIQUE INDEX {schema}unique_keys_held_idx ON {schema}unique_keys (unique_key) WHERE held;

INSERT INTO {schema}unique_keys (job_id, unique_key)
SELECT id, unique_key FROM {schema}jobs WHERE unique_key IS NOT NULL;
UPDATE {schema}jobs SET flow = flow | 8 WHERE unique_key IS NOT NULL;

-- The column can go once no index names it.
DROP INDEX {schema}jobs_unique_idx;
ALTER TABLE {schema}jobs DROP COLUMN unique_key;

-- Undoes 009_lease_token; see the PostgreSQL migration of the same number.
-- The index goes first: SQLite refuses to drop an indexed column.
DROP INDEX {schema}unique_keys_held_idx;
ALTER TABLE {schema}unique_keys DROP COLUMN queue;
ALTER TABLE {schema}unique_keys DROP COLUMN kind;
CREATE UNIQUE INDEX {schema}unique_keys_held_idx ON {schema}unique_keys (unique_key) WHERE held;
ALTER TABLE {schema}finished_jobs DROP COLUMN error_count;
ALTER TABLE {schema}jobs DROP COLUMN error_count;
ALTER TABLE {schema}jobs DROP COLUMN lease_token;

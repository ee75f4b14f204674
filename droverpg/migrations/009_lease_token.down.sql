-- Undoes 009_lease_token: unique keys held per key alone again (this fails
-- if two kinds or queues now hold the same key: release one first), no
-- error count, no lease token. Error histories cut to 20 stay cut.
DROP INDEX {schema}unique_keys_held_idx;
ALTER TABLE {schema}unique_keys DROP COLUMN queue;
ALTER TABLE {schema}unique_keys DROP COLUMN kind;
CREATE UNIQUE INDEX unique_keys_held_idx ON {schema}unique_keys (unique_key) WHERE held;
ALTER TABLE {schema}finished_jobs DROP COLUMN error_count;
ALTER TABLE {schema}jobs DROP COLUMN error_count;
ALTER TABLE {schema}jobs DROP COLUMN lease_token;

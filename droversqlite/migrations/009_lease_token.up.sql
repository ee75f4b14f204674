-- Lease tokens, a capped error history with its count, and unique keys
-- scoped to kind (and queue); see the PostgreSQL migration of the same
-- number for the reasons. The token is stored as its 16 bytes: as 32 hex
-- digits it made every claimed row 16 bytes longer, which measured as more
-- page splits in the claim's update.
ALTER TABLE {schema}jobs ADD COLUMN lease_token BLOB;

ALTER TABLE {schema}jobs ADD COLUMN error_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE {schema}finished_jobs ADD COLUMN error_count INTEGER NOT NULL DEFAULT 0;
UPDATE {schema}jobs SET error_count = json_array_length(errors) WHERE json_type(errors) = 'array';
UPDATE {schema}jobs SET errors = (
    SELECT json_group_array(json(e.value)) FROM (
        SELECT value FROM json_each({schema}jobs.errors)
        WHERE key >= json_array_length({schema}jobs.errors) - 20 ORDER BY key) AS e)
WHERE json_type(errors) = 'array' AND json_array_length(errors) > 20;
UPDATE {schema}finished_jobs SET error_count = json_array_length(errors) WHERE json_type(errors) = 'array';
UPDATE {schema}finished_jobs SET errors = (
    SELECT json_group_array(json(e.value)) FROM (
        SELECT value FROM json_each({schema}finished_jobs.errors)
        WHERE key >= json_array_length({schema}finished_jobs.errors) - 20 ORDER BY key) AS e)
WHERE json_type(errors) = 'array' AND json_array_length(errors) > 20;

ALTER TABLE {schema}unique_keys ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE {schema}unique_keys ADD COLUMN queue TEXT NOT NULL DEFAULT '';
UPDATE {schema}unique_keys SET kind = coalesce(
    (SELECT kind FROM {schema}jobs WHERE id = {schema}unique_keys.job_id),
    (SELECT kind FROM {schema}finished_jobs WHERE id = {schema}unique_keys.job_id), '');
DROP INDEX {schema}unique_keys_held_idx;
CREATE UNIQUE INDEX {schema}unique_keys_held_idx ON {schema}unique_keys (kind, queue, unique_key) WHERE held;

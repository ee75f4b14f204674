-- Hardening of what a caller that can reach the store may do.
--
-- Lease tokens. Results and heartbeats were fenced by (id, attempt) alone,
-- and both are guessable: IDs are sequential and most attempts are the
-- first. Every claim now draws a random 128-bit token (driver.LeaseToken)
-- and stores it on each row it claims; finish, heartbeat and release must
-- present it. The token lives only while the job runs: every statement
-- that takes a job out of running clears it or leaves it behind in jobs,
-- and finished_jobs has no such column. Jobs running when this migration
-- applies have no token, so results from workers that claimed them before
-- the upgrade are rejected by upgraded processes; the rescuer returns
-- those jobs when their leases expire.
ALTER TABLE {schema}jobs ADD COLUMN lease_token uuid;

-- Error history. Each failed attempt appended up to 128 KiB to errors, and
-- max_attempts may be a million, so every claim and read of a much-failed
-- job carried megabytes. Statements now keep the last driver.ErrorsKept
-- (20) errors and count all of them in error_count; existing histories
-- are cut to the same 20 here, their full length counted first.
ALTER TABLE {schema}jobs ADD COLUMN error_count integer NOT NULL DEFAULT 0;
ALTER TABLE {schema}finished_jobs ADD COLUMN error_count integer NOT NULL DEFAULT 0;
UPDATE {schema}jobs SET error_count = jsonb_array_length(errors),
    errors = jsonb_path_query_array(errors, '$[last - 19 to last]')
WHERE jsonb_typeof(errors) = 'array';
UPDATE {schema}finished_jobs SET error_count = jsonb_array_length(errors),
    errors = jsonb_path_query_array(errors, '$[last - 19 to last]')
WHERE jsonb_typeof(errors) = 'array';

-- Unique keys are scoped to their job's kind, and to its queue when the
-- job was inserted with InsertOpts.UniqueByQueue (queue '' otherwise): a
-- caller allowed to enqueue one kind could otherwise hold, and so block,
-- any key of every other kind. Keys stored so far take their job's kind.
ALTER TABLE {schema}unique_keys ADD COLUMN kind text NOT NULL DEFAULT '';
ALTER TABLE {schema}unique_keys ADD COLUMN queue text NOT NULL DEFAULT '';
UPDATE {schema}unique_keys u SET kind = j.kind FROM {schema}jobs j WHERE j.id = u.job_id;
UPDATE {schema}unique_keys u SET kind = f.kind FROM {schema}finished_jobs f WHERE f.id = u.job_id;
DROP INDEX {schema}unique_keys_held_idx;
CREATE UNIQUE INDEX unique_keys_held_idx ON {schema}unique_keys (kind, queue, unique_key) WHERE held;

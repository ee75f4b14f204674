-- Queue settings stored in the database; see the PostgreSQL migration of
-- the same number. Times are microseconds since the epoch, as elsewhere.
CREATE TABLE {schema}queue_settings (
    queue       TEXT    PRIMARY KEY,
    paused      INTEGER NOT NULL DEFAULT 0,
    max_running INTEGER NOT NULL DEFAULT 0,
    rate        INTEGER NOT NULL DEFAULT 0,
    period_ms   INTEGER NOT NULL DEFAULT 0,
    updated_at  INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

INSERT INTO {schema}queue_settings (queue, max_running, rate, period_ms, updated_at)
SELECT queue, max_running, rate, period_ms, refilled_at FROM {schema}queue_limits
WHERE max_running > 0 OR rate > 0;

-- queue_limits keeps only the rate bucket.
ALTER TABLE {schema}queue_limits DROP COLUMN max_running;
ALTER TABLE {schema}queue_limits DROP COLUMN rate;
ALTER TABLE {schema}queue_limits DROP COLUMN period_ms;

-- Queue settings stored in the database, so that they hold across the
-- fleet: every claim, by a Go client or a remote worker, applies the same
-- row, whatever the claimer's own configuration says. One row per queue
-- that has any setting; a queue without a row runs unpaused and unlimited.
-- Settings to come (routing, strict order, paused kinds) are columns of
-- this table.
--
-- Claims do not read this table: each process caches a queue's row for a
-- second and drops it when the store announces a change (the
-- "!settings:<queue>" notification, droverdriver.SettingsNotice). A
-- limited claim reads the limits here, under the row's lock.
CREATE TABLE {schema}queue_settings (
    queue       text        PRIMARY KEY,
    paused      boolean     NOT NULL DEFAULT false,
    max_running integer     NOT NULL DEFAULT 0,
    rate        integer     NOT NULL DEFAULT 0,
    period_ms   bigint      NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- The limits the clients' claims last wrote become stored settings.
INSERT INTO {schema}queue_settings (queue, max_running, rate, period_ms)
SELECT queue, max_running, rate, period_ms FROM {schema}queue_limits
WHERE max_running > 0 OR rate > 0;

-- queue_limits keeps only what limited claims change: the rate bucket.
ALTER TABLE {schema}queue_limits
    DROP COLUMN max_running,
    DROP COLUMN rate,
    DROP COLUMN period_ms;

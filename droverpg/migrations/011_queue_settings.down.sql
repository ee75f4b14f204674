-- Undoes 011_queue_settings: the limits go back to queue_limits, where
-- limited claims write them again. Pauses are lost.
ALTER TABLE {schema}queue_limits
    ADD COLUMN max_running integer NOT NULL DEFAULT 0,
    ADD COLUMN rate        integer NOT NULL DEFAULT 0,
    ADD COLUMN period_ms   bigint  NOT NULL DEFAULT 0;
INSERT INTO {schema}queue_limits AS l (queue, max_running, rate, period_ms, tokens)
SELECT queue, max_running, rate, period_ms, rate FROM {schema}queue_settings
WHERE max_running > 0 OR rate > 0
ON CONFLICT (queue) DO UPDATE
SET max_running = excluded.max_running, rate = excluded.rate, period_ms = excluded.period_ms;
DROP TABLE {schema}queue_settings;

-- Routing and strict order; see the PostgreSQL migration of the same
-- number. routing is JSON text, times unix microseconds.
ALTER TABLE {schema}jobs ADD COLUMN route TEXT;
ALTER TABLE {schema}jobs ADD COLUMN routing TEXT;
ALTER TABLE {schema}finished_jobs ADD COLUMN route TEXT;
ALTER TABLE {schema}finished_jobs ADD COLUMN routing TEXT;

DROP INDEX {schema}jobs_claim_idx;
CREATE INDEX {schema}jobs_claim_idx ON {schema}jobs (queue, priority, run_at, id) WHERE state = 'available' AND route IS NULL;
CREATE INDEX {schema}jobs_route_idx ON {schema}jobs (queue, route, priority, run_at, id) WHERE state = 'available' AND route IS NOT NULL;
CREATE INDEX {schema}jobs_returned_idx ON {schema}jobs (queue, attempted_at, id) WHERE state = 'available' AND limited = 1;

ALTER TABLE {schema}queue_settings ADD COLUMN strict INTEGER NOT NULL DEFAULT 0;

CREATE TABLE {schema}workers (
    name        TEXT    PRIMARY KEY,
    plain       INTEGER NOT NULL DEFAULT 0,
    type        TEXT    NOT NULL DEFAULT '',
    labels      TEXT    NOT NULL DEFAULT '{}',
    queues      TEXT    NOT NULL DEFAULT '[]',
    owner       TEXT    NOT NULL,
    source      TEXT    NOT NULL,
    started_at  INTEGER NOT NULL,
    last_seen   INTEGER NOT NULL
) WITHOUT ROWID;

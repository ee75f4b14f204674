-- Keyed jobs, continued; see the PostgreSQL migration of the same number.
ALTER TABLE {schema}finished_jobs ADD COLUMN ordering_key TEXT;
ALTER TABLE {schema}finished_jobs ADD COLUMN key_limit INTEGER NOT NULL DEFAULT 0;

-- Per-key rate limits: one token bucket per (queue, ordering key) with a
-- rate; see the PostgreSQL migration.
CREATE TABLE {schema}key_rates (
    queue        TEXT    NOT NULL,
    ordering_key TEXT    NOT NULL,
    rate         INTEGER NOT NULL,
    period_ms    INTEGER NOT NULL,
    tokens       REAL    NOT NULL,
    refilled_at  INTEGER NOT NULL,
    PRIMARY KEY (queue, ordering_key)
) WITHOUT ROWID;

-- The last tick inserted per periodic job; see the PostgreSQL migration.
CREATE TABLE {schema}periodic_ticks (
    name TEXT    PRIMARY KEY,
    tick INTEGER NOT NULL
) WITHOUT ROWID;

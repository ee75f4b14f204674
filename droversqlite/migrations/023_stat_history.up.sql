-- The history behind the dashboard's charts; see the PostgreSQL migration
-- of the same number. Times are unix microseconds, durations
-- milliseconds (REAL).
CREATE TABLE {schema}stat_samples (
    resolution INTEGER NOT NULL,
    at         INTEGER NOT NULL,
    queue      TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    pending    INTEGER NOT NULL,
    blocked    INTEGER NOT NULL,
    available  INTEGER NOT NULL,
    scheduled  INTEGER NOT NULL,
    retryable  INTEGER NOT NULL,
    running    INTEGER NOT NULL,
    completed  INTEGER NOT NULL,
    cancelled  INTEGER NOT NULL,
    discarded  INTEGER NOT NULL,
    pickup_p50 REAL    NOT NULL,
    pickup_p95 REAL    NOT NULL,
    pickup_p99 REAL    NOT NULL,
    run_p50    REAL    NOT NULL,
    run_p95    REAL    NOT NULL,
    run_p99    REAL    NOT NULL,
    PRIMARY KEY (resolution, at, queue, kind)
) WITHOUT ROWID;

CREATE TABLE {schema}topic_lag_samples (
    resolution   INTEGER NOT NULL,
    at           INTEGER NOT NULL,
    topic        TEXT    NOT NULL,
    subscription TEXT    NOT NULL,
    lag          INTEGER NOT NULL,
    oldest_ms    REAL    NOT NULL,
    dropped      INTEGER NOT NULL,
    PRIMARY KEY (resolution, at, topic, subscription)
) WITHOUT ROWID;

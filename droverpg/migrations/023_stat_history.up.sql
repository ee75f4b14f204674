-- The history behind the dashboard's charts, kept in the store so that it
-- survives restarts and covers days: the leader records a sample of every
-- queue's figures each minute (maintenance.HistoryRecorder), and of every
-- subscription's lag, then rolls minute samples older than two days into
-- hourly ones and drops hourly ones past the history's retention
-- (Config.HistoryRetention). The tables stay bounded by the queues, kinds
-- and subscriptions in use, never by the jobs.
--
-- A sample covers the window that ends at `at`, `resolution` seconds
-- long (60 or 3600). queue '' holds the figures of all queues together
-- and kind '' those of all kinds of the queue, recorded from the same
-- read, so that no chart sums or merges percentiles itself. Gauges
-- (waiting, running) are read at `at` (an hourly sample holds the hour's
-- average), counts are of jobs finished in the window, and percentiles
-- (ms, nearest rank) are of the completed ones (an hourly sample holds its
-- slowest minute's).
CREATE TABLE {schema}stat_samples (
    resolution integer NOT NULL,
    at         timestamptz NOT NULL,
    queue      text NOT NULL,
    kind       text NOT NULL,
    pending    bigint NOT NULL,
    blocked    bigint NOT NULL,
    available  bigint NOT NULL,
    scheduled  bigint NOT NULL,
    retryable  bigint NOT NULL,
    running    bigint NOT NULL,
    completed  bigint NOT NULL,
    cancelled  bigint NOT NULL,
    discarded  bigint NOT NULL,
    pickup_p50 double precision NOT NULL,
    pickup_p95 double precision NOT NULL,
    pickup_p99 double precision NOT NULL,
    run_p50    double precision NOT NULL,
    run_p95    double precision NOT NULL,
    run_p99    double precision NOT NULL,
    PRIMARY KEY (resolution, at, queue, kind)
);

-- Each subscription's lag (messages past its cursors), the age of the
-- oldest of them (ms) and its dropped count, sampled like stat_samples
-- (an hourly sample holds the hour's largest).
CREATE TABLE {schema}topic_lag_samples (
    resolution   integer NOT NULL,
    at           timestamptz NOT NULL,
    topic        text NOT NULL,
    subscription text NOT NULL,
    lag          bigint NOT NULL,
    oldest_ms    double precision NOT NULL,
    dropped      bigint NOT NULL,
    PRIMARY KEY (resolution, at, topic, subscription)
);

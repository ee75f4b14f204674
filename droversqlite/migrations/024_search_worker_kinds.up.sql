-- Indexes of finished jobs for search (issue 38): a filter by queue, kind
-- or failed state that few jobs match finds them in ID order without
-- reading the history between them (JobIDNext). SQLite has no block-range
-- index (PostgreSQL's migration of the same number uses one); a B-tree
-- entry costs a completion little here, where the write-ahead log holds
-- pages, not rows, and entries of one queue or kind go to the same last
-- page of its range. The failures (cancelled, discarded) have an index of
-- their own, by ID, which costs nothing while jobs complete.
CREATE INDEX {schema}finished_jobs_queue_idx ON {schema}finished_jobs (queue);
CREATE INDEX {schema}finished_jobs_kind_idx ON {schema}finished_jobs (kind);
CREATE INDEX {schema}finished_jobs_failed_idx ON {schema}finished_jobs (id) WHERE state <> 'completed';

-- The kinds a worker runs (issue 38), a JSON array: a Go client's
-- registered kinds, the kinds a remote worker names in its claims; NULL
-- for a worker that named none, which claims every kind. A waiting job of
-- a kind that no live worker of its queue runs is reported with the
-- unroutable jobs.
ALTER TABLE {schema}workers ADD COLUMN kinds TEXT;

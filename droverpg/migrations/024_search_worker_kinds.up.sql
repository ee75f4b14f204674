-- Indexes of finished jobs for search (issue 38): a filter by queue, kind
-- or state that few jobs match finds them without reading the history
-- between them (JobIDNext), and never at a cost to the jobs that complete.
--
-- finished_jobs_search_idx summarises each range of 128 pages: a bloom
-- filter of the queues and of the kinds its rows hold, and the range of
-- their IDs. A search for a rare queue or kind reads only the ranges that
-- may hold it. Completed jobs are appended in about ID order, into a range
-- not summarised yet, so a completion writes nothing to it (a B-tree on
-- queue or kind cost about 90 WAL bytes a job each, 9% of a job's); with
-- autosummarize, autovacuum summarises each range once it is full, and a
-- search reads the unsummarised last ones whole.
CREATE INDEX finished_jobs_search_idx ON {schema}finished_jobs
    USING brin (queue text_bloom_ops, kind text_bloom_ops, id int8_minmax_ops) WITH (autosummarize = on);

-- The failures (cancelled and discarded jobs) are what operators search
-- for most, and few beside the completed jobs: B-trees of them alone, by
-- ID, queue and kind, cost nothing while jobs complete.
CREATE INDEX finished_jobs_failed_idx ON {schema}finished_jobs (id) WHERE state <> 'completed';
CREATE INDEX finished_jobs_failed_queue_idx ON {schema}finished_jobs (queue, id) WHERE state <> 'completed';
CREATE INDEX finished_jobs_failed_kind_idx ON {schema}finished_jobs (kind, id) WHERE state <> 'completed';

-- The kinds a worker runs (issue 38): a Go client's registered kinds, the
-- kinds a remote worker names in its claims; NULL for a worker that named
-- none, which claims every kind. A waiting job of a kind that no live
-- worker of its queue runs is reported with the unroutable jobs.
ALTER TABLE {schema}workers ADD COLUMN kinds text[];

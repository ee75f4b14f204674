-- B-trees of finished jobs by queue and by kind, each in ID order (issue
-- 38). Search's seek (JobIDNext) asks for the first finished job of a
-- queue or kind past an ID; with these it reads one index entry, however
-- rare the queue and wherever its jobs lie, whatever statistics ANALYZE
-- sampled.
--
-- They replace finished_jobs_search_idx (migration 024), a BRIN index of
-- bloom filters that completions did not write. It answered only when the
-- planner chose it, and the planner could not know when to: its estimate
-- of a bloom index's ranges comes from the queue's correlation with the
-- table's order, and its estimate of a rare queue's rows from a sample.
-- With statistics that had seen a queue's two jobs among a million, the
-- seek walked the primary key over the 999,000 jobs before them (1.7 s);
-- and a queue of one job in a few thousand, spread over the table, has an
-- entry in every range's bloom filter, so the BRIN read every page. A
-- B-tree answers both in one entry. Each completion writes one entry to
-- each (docs/operations.md, "Searching jobs", has the cost).
DROP INDEX {schema}finished_jobs_search_idx;
CREATE INDEX finished_jobs_queue_idx ON {schema}finished_jobs (queue, id);
CREATE INDEX finished_jobs_kind_idx ON {schema}finished_jobs (kind, id);

-- PostgreSQL replaces its block-range index of finished jobs' queues and
-- kinds with B-trees by queue and by kind here (see its migration of the
-- same number), so that search's seek reads one entry whatever its
-- planner's statistics say. SQLite has had those B-trees since migration
-- 024 (finished_jobs_queue_idx, finished_jobs_kind_idx, each in ID order
-- by the rowid that ends every entry). The migration keeps both stores at
-- one schema version.
SELECT 1;

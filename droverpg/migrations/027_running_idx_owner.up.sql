-- The index of running rows (migration 026) is for the statements that
-- look for running jobs by their lease: the rescue pass, the worker
-- registry's check of a worker's running jobs, LeaseOwners. Its predicate
-- was state = 'running', which every statement that ends or extends
-- attempts by ID also says (JobComplete, JobFinish, JobHeartbeat, fenced
-- by state), so the planner could take it for them: on a backlog whose
-- statistics saw few jobs running, JobComplete ANDed a bitmap of every
-- running job's entry, and of the dead entries of every job finished since
-- the last vacuum (bitmap scans never mark entries dead), with the primary
-- key's, on every flush: 14% of the store's CPU in a burn-down (issue 36).
--
-- With lease_owner IS NOT NULL in the predicate, only a statement that
-- says so can use the index: the statements that want it name the owner
-- or say IS NOT NULL, the statements by ID do not. A claim always sets the
-- owner, so the index holds the same rows as before, and its key and
-- predicate are columns a claim writes anyway: heartbeats stay heap-only.
DROP INDEX {schema}jobs_running_idx;
CREATE INDEX jobs_running_idx ON {schema}jobs (lease_owner) WHERE state = 'running' AND lease_owner IS NOT NULL;

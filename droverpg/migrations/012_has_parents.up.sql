-- Marks the jobs that wait for other jobs (rows of job_deps as a child)
-- with flow bit 32 (droverdriver.FlowHasParents), which inserts set from
-- now on: the HTTP claim reads the parents' results of those jobs only,
-- so a claim of plain jobs costs no extra statement. Finished jobs need no
-- mark: only claims read it.
UPDATE {schema}jobs SET flow = flow | 32
WHERE flow & 32 = 0 AND id IN (SELECT child_id FROM {schema}job_deps);

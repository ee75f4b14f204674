-- Marks the jobs that wait for other jobs with flow bit 32
-- (droverdriver.FlowHasParents); see the PostgreSQL migration of the same
-- number.
UPDATE {schema}jobs SET flow = flow | 32
WHERE flow & 32 = 0 AND id IN (SELECT child_id FROM {schema}job_deps);

-- Undoes 012_has_parents; see the PostgreSQL migration of the same number.
UPDATE {schema}jobs SET flow = flow & ~32 WHERE flow & 32 <> 0;
UPDATE {schema}finished_jobs SET flow = flow & ~32 WHERE flow & 32 <> 0;

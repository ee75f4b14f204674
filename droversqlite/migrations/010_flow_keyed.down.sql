-- Undoes 010_flow_keyed; see the PostgreSQL migration of the same number.
UPDATE {schema}jobs SET flow = flow & ~16 WHERE ordering_key IS NOT NULL;
UPDATE {schema}finished_jobs SET flow = flow & ~16 WHERE flow & 16 <> 0;

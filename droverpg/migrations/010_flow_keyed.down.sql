-- Undoes 010_flow_keyed: keyed jobs lose their flow bit (16), which the
-- statements before it never set.
UPDATE {schema}jobs SET flow = flow & ~16 WHERE ordering_key IS NOT NULL;
UPDATE {schema}finished_jobs SET flow = flow & ~16 WHERE flow & 16 <> 0;

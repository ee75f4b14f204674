-- Undoes 012_has_parents: older binaries never read bit 32, but they
-- compare whole flow values in places (a forgotten completion needs flow
-- = 0), so the bit is cleared everywhere.
UPDATE {schema}jobs SET flow = flow & ~32 WHERE flow & 32 <> 0;
UPDATE {schema}finished_jobs SET flow = flow & ~32 WHERE flow & 32 <> 0;

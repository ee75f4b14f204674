-- PostgreSQL's migration of this number makes topic positions follow
-- commit order. SQLite's already do (one writer at a time, ids taken
-- inside the write transaction): nothing to change. The migration keeps
-- both stores at one schema version.
SELECT 1;

-- A fleet (droverfleet) is made of PostgreSQL databases only: an SQLite
-- file is never a shard, so it has no shard record (PostgreSQL's
-- migration of the same number). This migration changes nothing; it keeps
-- the schema versions of both stores in step, which the CLI and the docs
-- quote as one number.
SELECT 1;

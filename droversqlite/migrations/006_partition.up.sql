-- Partitioned claiming (QueueConfig.PartitionedClaims, docs/scaling.md).
--
-- SQLite has one writer, so claims never contend and partitions gain
-- nothing here; the column only gives partitioned claims the same meaning
-- on both stores. SQLite cannot add a column with a random default, so the
-- partition (one of 16, driver.Partitions) is the job ID modulo 16, a
-- virtual column: computed when read, it costs inserts nothing. There is
-- no index on it for the same reason: a partitioned claim filters the rows
-- jobs_claim_idx yields.
ALTER TABLE {schema}jobs ADD COLUMN part INTEGER NOT NULL GENERATED ALWAYS AS (id % 16) VIRTUAL;

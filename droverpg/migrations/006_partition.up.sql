-- Partitioned claiming (QueueConfig.PartitionedClaims, docs/scaling.md).
--
-- Every job gets one of 16 partitions (driver.Partitions) at random when it
-- is inserted. part is a column default, so every insert statement, the
-- unnest and INSERT ... SELECT ones included, draws it per row without
-- naming it. Adding a column with a volatile default rewrites the table
-- once; the hot table holds only waiting and running jobs, so this is short.
ALTER TABLE {schema}jobs ADD COLUMN part smallint NOT NULL DEFAULT floor(random() * 16);

-- Serves partitioned claims: equality on queue and part, then the claim
-- order. Producers that claim different partitions walk different ranges of
-- it, so they stop visiting the rows each other's claims in flight hold
-- (SKIP LOCKED still has to step over those in one shared index). Global
-- claims keep using jobs_claim_idx. Each index costs every insert and every
-- claim one more entry; docs/scaling.md has the measured balance.
CREATE INDEX jobs_claim_part_idx ON {schema}jobs (queue, part, priority, run_at, id) WHERE state = 'available';

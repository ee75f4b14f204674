-- Partitioned claiming (migration 006) is gone. Claims under a backlog
-- start past the producer's last claimed row instead (ClaimParams.After),
-- which took over what partitions were for: loaded claims are positional,
-- and a positional claim never took a partition, so the option had stopped
-- engaging. Its index still cost every insert a third entry: bulk inserts
-- ran 30% faster without it (docs/benchmarks.md, "Partitioned claiming,
-- removed"). Dropping the column only marks it dropped; nothing is
-- rewritten.
DROP INDEX {schema}jobs_claim_part_idx;
ALTER TABLE {schema}jobs DROP COLUMN part;

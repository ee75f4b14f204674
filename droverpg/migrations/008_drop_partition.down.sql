-- Undoes 008_drop_partition: puts back the partition column and its index
-- as migration 006 made them.
ALTER TABLE {schema}jobs ADD COLUMN part smallint NOT NULL DEFAULT floor(random() * 16);
CREATE INDEX jobs_claim_part_idx ON {schema}jobs (queue, part, priority, run_at, id) WHERE state = 'available';

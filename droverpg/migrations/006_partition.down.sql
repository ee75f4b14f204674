-- Undoes 006_partition.
DROP INDEX {schema}jobs_claim_part_idx;
ALTER TABLE {schema}jobs DROP COLUMN part;

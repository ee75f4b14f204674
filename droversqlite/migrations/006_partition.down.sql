-- Undoes 006_partition.
ALTER TABLE {schema}jobs DROP COLUMN part;

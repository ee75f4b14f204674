-- Undoes 008_drop_partition: puts back the virtual partition column as
-- migration 006 made it.
ALTER TABLE {schema}jobs ADD COLUMN part INTEGER NOT NULL GENERATED ALWAYS AS (id % 16) VIRTUAL;

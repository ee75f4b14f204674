-- Partitioned claiming is gone (see the PostgreSQL migration of the same
-- number). Here the partition was a virtual column with no index, so
-- dropping it changes no stored row; the migration keeps both stores at one
-- schema version.
ALTER TABLE {schema}jobs DROP COLUMN part;

-- Kinds paused within a queue; see the PostgreSQL migration of the same
-- number. A JSON array of kind names, sorted.
ALTER TABLE {schema}queue_settings ADD COLUMN paused_kinds TEXT NOT NULL DEFAULT '[]';

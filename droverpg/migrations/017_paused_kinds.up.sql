-- Kinds paused within a queue: a claim of the queue, by a Go client or a
-- remote worker, leaves jobs of these kinds where they are, as a paused
-- queue leaves all of them (engine.Claim). A column of queue_settings, so
-- that the row every process caches for a second carries it, and the
-- settings notice that drops that row announces a change of it too.
ALTER TABLE {schema}queue_settings ADD COLUMN paused_kinds text[] NOT NULL DEFAULT '{}';

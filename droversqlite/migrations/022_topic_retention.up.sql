-- Topic retention per topic and in bounded steps; see the PostgreSQL
-- migration of the same number. A generation whose drop the leader
-- decided is marked dropping: it is then deleted a chunk of rows per write
-- transaction (never one DELETE holding the only writer for the whole
-- generation), whatever subscriptions are created meanwhile.
ALTER TABLE {schema}topic_generations ADD COLUMN dropping INTEGER NOT NULL DEFAULT 0;

ALTER TABLE {schema}topic_lanes DROP COLUMN dropped;
DROP TABLE {schema}topic_generations;

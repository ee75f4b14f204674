ALTER TABLE {schema}topic_generations DROP COLUMN dropping;

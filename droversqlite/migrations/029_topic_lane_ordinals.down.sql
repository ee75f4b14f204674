ALTER TABLE {schema}topic_messages DROP COLUMN ord;

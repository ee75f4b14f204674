-- Back to migration 015's functions: partitions created and dropped
-- under ACCESS EXCLUSIVE on topic_messages.
DROP FUNCTION {schema}topic_generation_drop(bigint);
CREATE FUNCTION {schema}topic_generation_drop(g bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DROP TABLE IF EXISTS {schema}%I', 'topic_messages_g' || g);
    DELETE FROM {schema}topic_generations WHERE gen = g;
END $$;
CREATE OR REPLACE FUNCTION {schema}topic_generation_create(g bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE TABLE IF NOT EXISTS {schema}%I PARTITION OF {schema}topic_messages FOR VALUES FROM (%s) TO (%s)',
        'topic_messages_g' || g, g * 1099511627776, (g + 1) * 1099511627776);
    INSERT INTO {schema}topic_generations (gen) VALUES (g) ON CONFLICT (gen) DO NOTHING;
END $$;
ALTER TABLE {schema}topic_generations DROP COLUMN dropping;

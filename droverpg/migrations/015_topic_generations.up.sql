-- Topic retention by generations (docs/design/topics.md, "Retention").
-- Messages are partitioned by ID range: generation g holds the IDs
-- [g * 2^40, (g + 1) * 2^40) in a partition of its own, and a rotation moves
-- the ID sequence to the next generation's first ID. A generation leaves
-- the store when every subscription passed it or its topics' retention
-- expired, by DROP TABLE of its partition: no row deletes, no dead tuples
-- for vacuum. The width is droverdriver.GenerationWidth.
ALTER TABLE {schema}topic_messages RENAME TO topic_messages_013;
ALTER INDEX {schema}topic_messages_read_idx RENAME TO topic_messages_013_read_idx;

CREATE SEQUENCE {schema}topic_message_ids AS bigint;

CREATE TABLE {schema}topic_messages (
    id         bigint      NOT NULL DEFAULT nextval('{schema}topic_message_ids'),
    topic      text        NOT NULL,
    lane       integer     NOT NULL,
    xid        bigint      NOT NULL DEFAULT pg_current_xact_id()::text::bigint,
    key        text,
    payload    bytea       NOT NULL,
    metadata   jsonb       NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (id)
) PARTITION BY RANGE (id);
ALTER SEQUENCE {schema}topic_message_ids OWNED BY {schema}topic_messages.id;
CREATE INDEX topic_messages_read_idx ON {schema}topic_messages (topic, lane, xid, id);

-- One row per generation. sealed_xmax is the snapshot's xmax read after the
-- sequence moved past the generation: once the MVCC horizon (xmin) reaches
-- it, every transaction that took an ID of the generation has ended (a
-- publish takes its xid before its IDs, see TopicPublish), so the
-- generation's content is final.
CREATE TABLE {schema}topic_generations (
    gen         bigint      PRIMARY KEY,
    created_at  timestamptz NOT NULL DEFAULT now(),
    sealed_at   timestamptz,
    sealed_xmax bigint
);

-- topic_generation_create makes the partition of generation g; DDL needs
-- a name made from g, hence a function rather than a prepared statement.
CREATE FUNCTION {schema}topic_generation_create(g bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE TABLE IF NOT EXISTS {schema}%I PARTITION OF {schema}topic_messages FOR VALUES FROM (%s) TO (%s)',
        'topic_messages_g' || g, g * 1099511627776, (g + 1) * 1099511627776);
    INSERT INTO {schema}topic_generations (gen) VALUES (g) ON CONFLICT (gen) DO NOTHING;
END $$;

-- topic_generation_drop drops the partition of generation g.
CREATE FUNCTION {schema}topic_generation_drop(g bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DROP TABLE IF EXISTS {schema}%I', 'topic_messages_g' || g);
    DELETE FROM {schema}topic_generations WHERE gen = g;
END $$;

SELECT {schema}topic_generation_create(0);
INSERT INTO {schema}topic_messages SELECT id, topic, lane, xid, key, payload, metadata, created_at FROM {schema}topic_messages_013;
SELECT setval('{schema}topic_message_ids', coalesce((SELECT max(id) FROM {schema}topic_messages_013), 0) + 1, false);
DROP TABLE {schema}topic_messages_013;

-- Messages retention removed before a lane's subscription read them.
ALTER TABLE {schema}topic_lanes ADD COLUMN dropped bigint NOT NULL DEFAULT 0;

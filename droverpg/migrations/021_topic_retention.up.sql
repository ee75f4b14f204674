-- Topic retention without stalls, per topic (docs/design/topics.md,
-- "Retention").
--
-- A generation whose drop the leader decided is marked dropping: the
-- decision is taken in a transaction that keeps new subscriptions off the
-- generation's topics (TopicGenerationLock), and once marked it is
-- dropped whatever subscriptions come later.
ALTER TABLE {schema}topic_generations ADD COLUMN dropping boolean NOT NULL DEFAULT false;

-- topic_generation_create makes the partition of generation g as a table
-- of its own and attaches it. ATTACH PARTITION takes SHARE UPDATE
-- EXCLUSIVE on topic_messages, which neither publishes nor reads conflict
-- with; CREATE TABLE … PARTITION OF took ACCESS EXCLUSIVE, which waited
-- behind every open reader and queued every publish and read behind it
-- (up to the rotation's 2 s lock timeout).
CREATE OR REPLACE FUNCTION {schema}topic_generation_create(g bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    part text := 'topic_messages_g' || g;
BEGIN
    IF to_regclass(format('{schema}%I', part)) IS NULL THEN
        EXECUTE format('CREATE TABLE {schema}%I (LIKE {schema}topic_messages INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part);
        EXECUTE format('ALTER TABLE {schema}topic_messages ATTACH PARTITION {schema}%I FOR VALUES FROM (%s) TO (%s)',
            part, g * 1099511627776, (g + 1) * 1099511627776);
    END IF;
    INSERT INTO {schema}topic_generations (gen) VALUES (g) ON CONFLICT (gen) DO NOTHING;
END $$;

-- topic_generation_drop drops the partition of generation g after
-- TopicDrop detached it (DETACH PARTITION … CONCURRENTLY, which cannot run
-- in a function, and which waits for the transactions using topic_messages
-- without blocking any: DROP TABLE of an attached partition took ACCESS
-- EXCLUSIVE on topic_messages and stalled all topic traffic behind the
-- slowest reader for up to its 2 s lock timeout). Each lane first adds
-- the messages of the generation it had not passed to dropped, counted in
-- the detached table, which nothing reads any more. Returns them in all.
DROP FUNCTION {schema}topic_generation_drop(bigint);
CREATE FUNCTION {schema}topic_generation_drop(g bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    part text := 'topic_messages_g' || g;
    lost bigint := 0;
BEGIN
    IF to_regclass(format('{schema}%I', part)) IS NOT NULL THEN
        EXECUTE format($q$
            WITH lost AS (
                SELECT l.topic, l.subscription, l.lane, p.n FROM {schema}topic_lanes AS l
                CROSS JOIN LATERAL (SELECT count(*) AS n FROM {schema}%I AS m
                    WHERE m.topic = l.topic AND m.lane = l.lane AND (m.xid, m.id) > (l.cursor_xid, l.cursor_id)) AS p
                WHERE p.n > 0),
            upd AS (
                UPDATE {schema}topic_lanes AS l SET dropped = l.dropped + lost.n FROM lost
                WHERE l.topic = lost.topic AND l.subscription = lost.subscription AND l.lane = lost.lane
                RETURNING lost.n)
            SELECT coalesce(sum(n), 0)::bigint FROM upd$q$, part) INTO lost;
        EXECUTE format('DROP TABLE {schema}%I', part);
    END IF;
    DELETE FROM {schema}topic_generations WHERE gen = g;
    RETURN lost;
END $$;

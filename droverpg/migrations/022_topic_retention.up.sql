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
-- the messages of the generation it had not passed to dropped (those not
-- sequenced yet among them, migration 020), counted in the detached
-- table, which nothing reads any more. The counts are read
-- before any lane is updated, so that the lanes' rows, which acks update,
-- are locked only for the update and the drop, not while the generation
-- is counted. Returns the messages lost in all.
DROP FUNCTION {schema}topic_generation_drop(bigint);
CREATE FUNCTION {schema}topic_generation_drop(g bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    part text := 'topic_messages_g' || g;
    topics text[];
    subs text[];
    lanes integer[];
    lost bigint[];
BEGIN
    IF to_regclass(format('{schema}%I', part)) IS NOT NULL THEN
        EXECUTE format($q$
            SELECT array_agg(l.topic), array_agg(l.subscription), array_agg(l.lane), array_agg(p.n)
            FROM {schema}topic_lanes AS l
            CROSS JOIN LATERAL (SELECT count(*) AS n FROM {schema}%I AS m
                WHERE m.topic = l.topic AND m.lane = l.lane AND ((m.xid, m.id) > (l.cursor_xid, l.cursor_id) OR m.xid < 0)) AS p
            WHERE p.n > 0$q$, part) INTO topics, subs, lanes, lost;
        UPDATE {schema}topic_lanes AS l SET dropped = l.dropped + u.n
        FROM unnest(topics, subs, lanes, lost) AS u(topic, sub, lane, n)
        WHERE l.topic = u.topic AND l.subscription = u.sub AND l.lane = u.lane;
        EXECUTE format('DROP TABLE {schema}%I', part);
    END IF;
    DELETE FROM {schema}topic_generations WHERE gen = g;
    RETURN coalesce((SELECT sum(n) FROM unnest(lost) AS n), 0);
END $$;

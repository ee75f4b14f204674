-- Per-lane ordinals of topic messages (issue 36, "Fan-out with a deep
-- backlog"). A message's ord counts the messages of its (topic, lane) up to
-- and including it, in position order, from the lane's first: the
-- sequencing pass that gives a message its position gives it the next
-- ordinal of its lane. The messages past a cursor are then the lane's last
-- ordinal less the ordinal of the first message past the cursor, plus one:
-- two index probes, where TopicLag used to read each lane's whole backlog
-- from its lowest cursor on every call (2.5 s a call at 500,000 messages
-- in `drover bench fanout`, every 250 ms).
--
-- Ordinals only grow along a lane's positions; after retention removed a
-- lane's every message the next ones may start again from 1, which no
-- count mixes with the ordinals of messages gone.
ALTER TABLE {schema}topic_messages ADD COLUMN ord bigint;

-- The messages already sequenced get theirs now, so that a store upgraded
-- with a backlog reports its lag as before; those not sequenced yet get
-- theirs from the pass that sequences them.
UPDATE {schema}topic_messages AS m SET ord = o.ord
FROM (SELECT id, row_number() OVER (PARTITION BY topic, lane ORDER BY xid, id) AS ord
      FROM {schema}topic_messages WHERE xid > 0) AS o
WHERE m.id = o.id AND m.xid > 0;

-- topic_sequence as migration 020's, giving each message its ordinal too.
CREATE OR REPLACE FUNCTION {schema}topic_sequence(lim integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    n integer;
BEGIN
    IF NOT pg_try_advisory_xact_lock(hashtext('{schema}topic_sequencer'), 0) THEN
        RETURN -1;
    END IF;
    -- The pass does not wait for its WAL flush (it would add one to the
    -- path of every delivery): a pass lost in a crash is redone, and no
    -- durable ack can depend on it, since an ack's commit comes later in
    -- the WAL and flushing it flushes the pass.
    PERFORM set_config('synchronous_commit', 'off', true);
    WITH snap AS MATERIALIZED (
        SELECT pg_snapshot_xmax(s)::text::bigint AS xmax,
            ARRAY(SELECT x::text::bigint FROM pg_snapshot_xip(s) AS x) AS running
        FROM pg_current_snapshot() AS s),
    -- The newest pass, the last entry of the primary key (older rows
    -- the passes deleted stay behind it while vacuum is held back).
    prev AS MATERIALIZED (
        SELECT coalesce(p.pass_xmax, 0) AS xmax, coalesce(p.xids, '{}') AS xids
        FROM (SELECT) AS one LEFT JOIN LATERAL (
            SELECT pass_xmax, xids FROM {schema}topic_sequencer ORDER BY pass_xmax DESC LIMIT 1) AS p ON true),
    -- Transactions of the last pass's list that have ended since: their
    -- messages, if they committed any, are readable now.
    ended AS MATERIALIZED (
        SELECT ARRAY(SELECT -x FROM unnest(prev.xids) AS x WHERE x <> ALL (snap.running)) AS negs FROM prev, snap),
    -- Bounds as scalar subqueries, so that they are index conditions.
    found AS MATERIALIZED (
        SELECT m.id, m.xid, m.topic, m.lane FROM {schema}topic_messages AS m
        WHERE m.xid < 0 AND m.xid > -(SELECT xmax FROM snap) AND m.xid <= -(SELECT xmax FROM prev)
        UNION ALL
        SELECT m.id, m.xid, m.topic, m.lane FROM {schema}topic_messages AS m
        WHERE m.xid < 0 AND m.xid = ANY ((SELECT negs FROM ended)::bigint[])),
    pick AS MATERIALIZED (
        SELECT id, topic, lane FROM found ORDER BY id LIMIT lim),
    -- Each lane's ordinals go on from its last sequenced message (the
    -- read index's last entry of the lane with a position, one backward
    -- probe per lane the pass touches), in id order within the pass, the
    -- order of the positions it gives.
    heads AS MATERIALIZED (
        SELECT k.topic, k.lane, coalesce((
            SELECT m.ord FROM {schema}topic_messages AS m
            WHERE m.topic = k.topic AND m.lane = k.lane AND m.xid > 0
            ORDER BY m.xid DESC, m.id DESC LIMIT 1), 0) AS ord
        FROM (SELECT DISTINCT topic, lane FROM pick) AS k),
    numbered AS MATERIALIZED (
        SELECT p.id, h.ord + row_number() OVER (PARTITION BY p.topic, p.lane ORDER BY p.id) AS ord
        FROM pick AS p JOIN heads AS h ON h.topic = p.topic AND h.lane = p.lane),
    -- By primary key (the ANY is the index condition, the join only pairs
    -- each row with its ordinal); every row picked is visible and not
    -- sequenced, and no other pass runs.
    upd AS (
        UPDATE {schema}topic_messages AS m SET xid = (SELECT xmax FROM snap), ord = n.ord
        FROM numbered AS n
        WHERE m.id = ANY ((SELECT array_agg(id) FROM pick)::bigint[]) AND m.id = n.id
        RETURNING 1),
    state AS (
        INSERT INTO {schema}topic_sequencer (pass_xmax, xids)
        SELECT snap.xmax, ARRAY(
            SELECT unnest(snap.running)
            UNION SELECT -f.xid FROM found AS f WHERE f.id > (SELECT max(id) FROM pick))
        FROM snap WHERE EXISTS (SELECT 1 FROM pick)
        RETURNING pass_xmax),
    old AS (
        DELETE FROM {schema}topic_sequencer AS t USING state WHERE t.pass_xmax < state.pass_xmax)
    SELECT count(*) INTO n FROM upd;
    RETURN n;
END $$;

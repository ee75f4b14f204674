-- Back to migration 020's sequencing pass, without ordinals.
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
        SELECT m.id, m.xid FROM {schema}topic_messages AS m
        WHERE m.xid < 0 AND m.xid > -(SELECT xmax FROM snap) AND m.xid <= -(SELECT xmax FROM prev)
        UNION ALL
        SELECT m.id, m.xid FROM {schema}topic_messages AS m
        WHERE m.xid < 0 AND m.xid = ANY ((SELECT negs FROM ended)::bigint[])),
    pick AS MATERIALIZED (
        SELECT id FROM found ORDER BY id LIMIT lim),
    -- By primary key; every row picked is visible and not sequenced, and
    -- no other pass runs.
    upd AS (
        UPDATE {schema}topic_messages AS m SET xid = (SELECT xmax FROM snap)
        WHERE m.id = ANY ((SELECT array_agg(id) FROM pick)::bigint[])
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

ALTER TABLE {schema}topic_messages DROP COLUMN ord;

-- Topic messages are delivered in commit order (docs/design/topics.md,
-- "Visibility"). Until this migration a message's position
-- was (xid, id) with xid its publisher's transaction id, readable once the
-- cluster's oldest running transaction was past it: the order of the
-- publishers' first writes, not of their commits, and one idle transaction
-- anywhere in the cluster held back every topic.
--
-- Now a publish stores xid = -(its transaction id): not readable yet. A
-- sequencing pass (topic_sequence, run by consumers before they lease and
-- by the lag and retention statements) gives every message committed since
-- the last pass the position (v, id), v being the xmax of the pass's
-- snapshot, in one transaction. Passes run one at a time and each v is
-- above the last (the previous pass's own xid, below this pass's xmax, is
-- at least that pass's v), so positions become readable in increasing
-- order and a reader needs no horizon: a cursor never passes a message
-- that can still appear. A message committed before another was published
-- has the lower id and is sequenced in the same pass or an earlier one, so
-- it comes first. An open transaction delays only its own messages.
--
-- The values of existing rows and cursors stay as they are: every old xid
-- is below the first pass's v, so old positions sort before new ones.
-- The ALTER below waits for publishers in flight to end; publishers of an
-- older Drover must not run once this migration has committed (theirs
-- would be readable at once, in xid order).
ALTER TABLE {schema}topic_messages ALTER COLUMN xid SET DEFAULT -pg_current_xact_id()::text::bigint;

-- The messages not sequenced yet, found by their publisher's transaction.
-- A pass looks up only the transactions that may have committed since the
-- pass before (see topic_sequencer), never the entries of messages already
-- sequenced, which a transaction that holds back vacuum keeps in the index.
CREATE INDEX topic_messages_unsequenced_idx ON {schema}topic_messages (xid) WHERE xid < 0;

-- One row per pass that sequenced messages (older rows are deleted by the
-- next; only the newest is read, the last entry of the primary key):
-- pass_xmax is its snapshot's xmax, the position v it gave; xids are the
-- transactions the next pass must look up by id: those running at its
-- snapshot (they may have published and commit later) and those whose
-- messages it left for the next pass (it takes at most its limit). Every
-- other transaction that can still commit a message has an xid of
-- pass_xmax or above. The first row is this migration's snapshot.
CREATE TABLE {schema}topic_sequencer (
    pass_xmax bigint   PRIMARY KEY,
    xids      bigint[] NOT NULL
);
INSERT INTO {schema}topic_sequencer (pass_xmax, xids)
SELECT pg_snapshot_xmax(s)::text::bigint, ARRAY(SELECT x::text::bigint FROM pg_snapshot_xip(s) AS x)
FROM pg_current_snapshot() AS s;

-- topic_sequence gives positions to at most lim messages committed since
-- the last pass, lowest ids first, and returns how many (lim: there may be
-- more), or -1 when another pass holds the lock (its positions are
-- readable when it commits). It must run in a transaction of its own: the
-- lock is held until that commits, and no other pass can run meanwhile.
-- The lock is taken before the statement that reads, so that its snapshot
-- sees the pass before.
CREATE FUNCTION {schema}topic_sequence(lim integer) RETURNS integer LANGUAGE plpgsql AS $$
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

-- topic_publishers are the open transactions of this database that have
-- published messages (they hold a write lock on topic_messages until they
-- end), oldest first by xid: each delays its own messages, and retention
-- of the generation they wrote to. A prepared transaction has no pid; its
-- state is 'prepared' and xact_start when it was prepared. Names and
-- states of other roles' sessions need pg_read_all_stats.
CREATE VIEW {schema}topic_publishers AS
WITH w AS (
    SELECT DISTINCT l.virtualtransaction, l.pid FROM pg_locks AS l
    WHERE l.locktype = 'relation' AND l.mode = 'RowExclusiveLock' AND l.granted
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.relation = '{schema}topic_messages'::regclass),
-- The transaction's own lock on its xid gives the xid (32 bits); the full
-- one is the snapshot's xmax moved by their difference, within 2^31 for
-- any transaction still running.
t AS (
    SELECT w.pid, k.transactionid, x.xmax + ((k.transactionid::text::bigint - (x.xmax & 4294967295) + 2147483648) & 4294967295)
        - 2147483648 AS xid
    FROM w
    JOIN pg_locks AS k ON k.virtualtransaction = w.virtualtransaction AND k.locktype = 'transactionid' AND k.mode = 'ExclusiveLock',
    (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS xmax) AS x)
SELECT t.xid, t.pid, a.application_name,
    CASE WHEN t.pid IS NULL THEN 'prepared' ELSE a.state END AS state,
    coalesce(a.xact_start, p.prepared) AS xact_start, p.gid
FROM t
LEFT JOIN pg_stat_activity AS a ON a.pid = t.pid
LEFT JOIN pg_prepared_xacts AS p ON t.pid IS NULL AND p.transaction = t.transactionid;

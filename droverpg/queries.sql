-- Every statement the PostgreSQL driver runs. "{schema}" becomes the quoted
-- schema name followed by a dot. Hot-path statements take arrays so that one
-- statement covers a whole batch.

-- name: JobInsertMany
INSERT INTO {schema}jobs (queue, kind, args, metadata, tags, priority, max_attempts, run_at, timeout_ms)
SELECT queue, kind, args, metadata, string_to_array(tags, ','), priority, max_attempts, coalesce(run_at, now()), timeout_ms
FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::jsonb[], $5::text[], $6::smallint[], $7::integer[], $8::timestamptz[], $9::bigint[])
    WITH ORDINALITY AS p(queue, kind, args, metadata, tags, priority, max_attempts, run_at, timeout_ms, ord)
ORDER BY ord
RETURNING id;

-- name: JobInsertKeyed
-- Jobs with an ordering key or a unique key (plain jobs take JobInsertMany,
-- which never reads other rows). A keyed job starts available only if no
-- job of its key is blocked and its key has room: the jobs of the key
-- already active plus those ahead of it in this batch stay under its
-- key_limit. Otherwise it waits as blocked. KeyLock on the same keys runs
-- first in the same transaction, so the count cannot go stale before
-- commit. A unique key that an unfinished job holds skips the row; RETURNING
-- gives the unique key of each row inserted so that the caller can tell
-- which rows were skipped.
WITH p AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::jsonb[], $5::text[], $6::smallint[], $7::integer[],
            $8::timestamptz[], $9::bigint[], $10::text[], $11::integer[], $12::text[])
        WITH ORDINALITY AS p(queue, kind, args, metadata, tags, priority, max_attempts, run_at, timeout_ms,
            ordering_key, key_limit, unique_key, ord)
),
gated AS (
    SELECT p.*,
        CASE WHEN p.ordering_key IS NULL THEN 'available'
             WHEN NOT EXISTS (SELECT 1 FROM {schema}jobs j
                              WHERE j.queue = p.queue AND j.ordering_key = p.ordering_key AND j.state = 'blocked')
              AND (SELECT count(*) FROM {schema}jobs j
                   WHERE j.queue = p.queue AND j.ordering_key = p.ordering_key AND j.state IN ('available', 'running'))
                  + row_number() OVER (PARTITION BY p.queue, p.ordering_key ORDER BY p.ord) <= p.key_limit
             THEN 'available'
             ELSE 'blocked' END AS state
    FROM p
)
INSERT INTO {schema}jobs (state, queue, kind, args, metadata, tags, priority, max_attempts, run_at, timeout_ms,
    ordering_key, key_limit, unique_key)
SELECT state, queue, kind, args, metadata, string_to_array(tags, ','), priority, max_attempts, coalesce(run_at, now()),
    timeout_ms, ordering_key, key_limit, unique_key
FROM gated
ORDER BY ord
ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL DO NOTHING
RETURNING id, unique_key;

-- name: KeyLock
-- Serialises, per (queue, ordering key), the transactions that count a
-- key's active jobs: keyed inserts and the finishes and sweeps that promote.
-- Transaction-scoped advisory locks, taken in one order, so that two
-- transactions never wait on each other in a cycle. Plain jobs never take
-- them. Keys share 256 locks by hash: a finish batch covering hundreds of
-- keys then holds at most 256 entries of PostgreSQL's shared lock table
-- (sized by max_locks_per_transaction, 64 per connection by default), at
-- the price of keys of one stripe taking turns.
SELECT count(pg_advisory_xact_lock(hashtext('{schema}jobs'), k))
FROM (
    SELECT DISTINCT hashtext(queue || chr(31) || ordering_key) & 255 AS k
    FROM unnest($1::text[], $2::text[]) AS t(queue, ordering_key)
    ORDER BY k
) s;

-- name: KeyPromote
-- Makes the oldest blocked jobs of each (queue, ordering key) available
-- while the key has room: its active jobs stay within the key_limit of its
-- next blocked job. $3 is the notification channel: promoted jobs wake
-- their queues when the transaction commits. Runs under KeyLock.
WITH k AS (
    SELECT DISTINCT queue, ordering_key FROM unnest($1::text[], $2::text[]) AS k(queue, ordering_key)
),
next AS (
    SELECT b.id
    FROM k
    CROSS JOIN LATERAL (
        SELECT j.key_limit FROM {schema}jobs j
        WHERE j.queue = k.queue AND j.ordering_key = k.ordering_key AND j.state = 'blocked'
        ORDER BY j.id
        LIMIT 1
    ) head
    CROSS JOIN LATERAL (
        SELECT count(*) AS n FROM {schema}jobs j
        WHERE j.queue = k.queue AND j.ordering_key = k.ordering_key AND j.state IN ('available', 'running')
    ) active
    CROSS JOIN LATERAL (
        SELECT j.id FROM {schema}jobs j
        WHERE j.queue = k.queue AND j.ordering_key = k.ordering_key AND j.state = 'blocked'
        ORDER BY j.id
        LIMIT greatest(head.key_limit - active.n, 0)
    ) b
),
promoted AS (
    UPDATE {schema}jobs j SET state = 'available' FROM next WHERE j.id = next.id RETURNING j.queue
)
SELECT (SELECT count(*) FROM promoted),
    (SELECT count(pg_notify($3, queue)) FROM (SELECT DISTINCT queue FROM promoted) q);

-- name: KeyBlocked
-- The keys that have blocked jobs, for the promotion sweep. The ordering_key
-- condition lets the planner use jobs_key_idx, which holds keyed rows only,
-- instead of scanning the hot table of a queue of plain jobs.
SELECT DISTINCT queue, ordering_key FROM {schema}jobs
WHERE state = 'blocked' AND ordering_key IS NOT NULL
LIMIT $1;

-- name: Notify
SELECT pg_notify($1, queue) FROM unnest($2::text[]) AS queue;

-- name: JobClaim
-- attempted_at is clock_timestamp(), read while the update runs, rather than
-- now(), the transaction's start: planning the claim happens in between, and
-- a keyed job promoted by a finish that committed meanwhile would otherwise
-- appear to have started before its predecessor finished.
--
-- order: $5 is true for a queue with cluster-wide limits, whose claim runs
-- inside the transaction of QueueLimitTake and QueueLimitRoom (limits.go),
-- with $2 the room they found: it marks the rows it claims as limited and
-- spends a rate token on each. For other queues $5 is false and the spent
-- part does nothing.
WITH picked AS (
    SELECT id
    FROM {schema}jobs
    WHERE state = 'available' AND queue = $1 AND run_at <= now()
    ORDER BY priority, run_at, id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
),
claimed AS (
    UPDATE {schema}jobs j
    SET state = 'running',
        attempt = j.attempt + 1,
        attempted_at = clock_timestamp(),
        lease_owner = $3,
        lease_expires_at = now() + $4::float8 * interval '1 millisecond',
        limited = $5::boolean
    FROM picked
    WHERE j.id = picked.id
    RETURNING j.id, j.queue, j.kind, j.priority, j.args, j.metadata, j.tags, j.attempt, j.max_attempts,
        j.errors, j.timeout_ms, j.created_at, j.run_at, j.attempted_at, j.lease_owner, j.lease_expires_at, j.cancel_requested,
        j.ordering_key -- order: the key tells the finish to promote (NULL for plain jobs)
),
spent AS (
    UPDATE {schema}queue_limits l
    SET tokens = l.tokens - c.n
    FROM (SELECT count(*) AS n FROM claimed) c
    WHERE $5::boolean AND l.queue = $1 AND l.rate > 0
)
SELECT * FROM claimed;

-- name: QueueLimitTake
-- Writes the queue's limits as this client configures them and refills the
-- rate bucket for the time since the last claim. The row stays locked until
-- the claim's transaction commits, so the limited claims of one queue take
-- turns; claims of other queues never touch it. $2 max running, $3 rate, $4
-- period in ms (0: no limit).
INSERT INTO {schema}queue_limits AS l (queue, max_running, rate, period_ms, tokens, refilled_at)
VALUES ($1, $2::integer, $3::integer, $4::bigint, $3::integer, now())
ON CONFLICT (queue) DO UPDATE
SET max_running = excluded.max_running,
    rate = excluded.rate,
    period_ms = excluded.period_ms,
    tokens = CASE WHEN excluded.rate = 0 THEN 0
        ELSE least(excluded.rate::float8,
            l.tokens + excluded.rate * extract(epoch FROM now() - l.refilled_at)::float8 * 1000 / excluded.period_ms) END,
    refilled_at = now();

-- name: QueueLimitRoom
-- How many jobs the claim may take, at most $2: the queue's rows claimed
-- under its limits and still running (counted from jobs_limited_idx) stay
-- within max_running, and each job needs a whole token. A statement of its
-- own, after QueueLimitTake took the row lock, so that its snapshot sees
-- every limited claim that committed before.
SELECT greatest(0, least($2,
    CASE WHEN l.max_running > 0
        THEN l.max_running - (SELECT count(*) FROM {schema}jobs r
                              WHERE r.queue = $1 AND r.limited AND r.state = 'running')
        ELSE $2 END,
    CASE WHEN l.rate > 0 THEN floor(l.tokens)::integer ELSE $2 END))
FROM {schema}queue_limits l
WHERE l.queue = $1;

-- name: JobFinish
-- Outcomes: 1 completed, 2 retry, 3 discarded, 4 cancelled, 5 released.
-- Every result is fenced by (id, attempt, state running). Rows that finish
-- move to finished_jobs; retried and released rows stay and wait again. A
-- retry or release of a job whose cancel was requested finishes it as
-- cancelled instead.
WITH r AS (
    SELECT * FROM unnest($1::bigint[], $2::integer[], $3::smallint[], $4::jsonb[], $5::timestamptz[])
        AS r(id, attempt, outcome, error, run_at)
),
done AS (
    DELETE FROM {schema}jobs j
    USING r
    WHERE j.id = r.id AND j.attempt = r.attempt AND j.state = 'running'
      AND (r.outcome IN (1, 3, 4) OR j.cancel_requested)
    RETURNING j.*, r.outcome, r.error AS new_error
),
moved AS (
    INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, args, metadata, tags, attempt,
        max_attempts, errors, timeout_ms, created_at, run_at, attempted_at, finalized_at)
    SELECT id,
        CASE outcome WHEN 1 THEN 'completed' WHEN 3 THEN 'discarded' ELSE 'cancelled' END,
        queue, kind, priority, args, metadata, tags, attempt, max_attempts,
        CASE WHEN new_error IS NULL THEN errors ELSE coalesce(errors, '[]'::jsonb) || jsonb_build_array(new_error) END,
        timeout_ms, created_at, run_at, attempted_at, now()
    FROM done
),
waiting AS (
    UPDATE {schema}jobs j
    SET state = 'available',
        run_at = CASE WHEN r.outcome = 5 THEN now() ELSE r.run_at END,
        attempt = CASE WHEN r.outcome = 5 THEN j.attempt - 1 ELSE j.attempt END,
        errors = CASE WHEN r.error IS NULL THEN j.errors ELSE coalesce(j.errors, '[]'::jsonb) || jsonb_build_array(r.error) END,
        lease_owner = NULL,
        lease_expires_at = NULL
    FROM r
    WHERE j.id = r.id AND j.attempt = r.attempt AND j.state = 'running'
      AND r.outcome IN (2, 5) AND NOT j.cancel_requested
    RETURNING j.id
)
SELECT id FROM done
UNION ALL
SELECT id FROM waiting;

-- name: JobHeartbeat
WITH r AS (
    SELECT * FROM unnest($1::bigint[], $2::integer[]) AS r(id, attempt)
),
held AS (
    UPDATE {schema}jobs j
    SET lease_expires_at = now() + $3::float8 * interval '1 millisecond'
    FROM r
    WHERE j.id = r.id AND j.attempt = r.attempt AND j.state = 'running'
    RETURNING j.id, j.cancel_requested
)
SELECT r.id, held.id IS NOT NULL, coalesce(held.cancel_requested, false)
FROM r LEFT JOIN held ON held.id = r.id;

-- name: JobRescue
WITH expired AS (
    SELECT id
    FROM {schema}jobs
    WHERE state = 'running' AND lease_expires_at < $1
    ORDER BY lease_expires_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
),
done AS (
    DELETE FROM {schema}jobs j
    USING expired
    WHERE j.id = expired.id AND (j.attempt >= j.max_attempts OR j.cancel_requested)
    RETURNING j.*
),
moved AS (
    INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, args, metadata, tags, attempt,
        max_attempts, errors, timeout_ms, created_at, run_at, attempted_at, finalized_at)
    SELECT id, CASE WHEN cancel_requested THEN 'cancelled' ELSE 'discarded' END,
        queue, kind, priority, args, metadata, tags, attempt, max_attempts,
        coalesce(errors, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
            'attempt', attempt, 'at', now(), 'error', 'lease expired: the worker stopped heartbeating (crashed or lost its connection)')),
        timeout_ms, created_at, run_at, attempted_at, now()
    FROM done
),
waiting AS (
    UPDATE {schema}jobs j
    SET state = 'available',
        run_at = now(),
        errors = coalesce(j.errors, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
            'attempt', j.attempt, 'at', now(), 'error', 'lease expired: the worker stopped heartbeating (crashed or lost its connection)')),
        lease_owner = NULL,
        lease_expires_at = NULL
    FROM expired
    WHERE j.id = expired.id AND j.attempt < j.max_attempts AND NOT j.cancel_requested
    RETURNING j.id
)
SELECT (SELECT count(*) FROM done) + (SELECT count(*) FROM waiting);

-- name: JobPrune
-- $5 is the latest of the cutoffs: no row past it can be due, and the bound
-- lets the BRIN index skip every recent block range.
DELETE FROM {schema}finished_jobs
WHERE id IN (
    SELECT id FROM {schema}finished_jobs
    WHERE finalized_at < $5
      AND ((state = 'completed' AND finalized_at < $1)
       OR (state = 'cancelled' AND finalized_at < $2)
       OR (state = 'discarded' AND finalized_at < $3))
    LIMIT $4
);

-- name: JobGet
SELECT id, CASE WHEN state = 'available' AND run_at > now() THEN CASE WHEN attempt = 0 THEN 'scheduled' ELSE 'retryable' END ELSE state END,
    queue, kind, priority, args, metadata, tags, attempt, max_attempts, errors, timeout_ms, created_at, run_at,
    attempted_at, NULL::timestamptz, lease_owner, lease_expires_at, cancel_requested
FROM {schema}jobs WHERE id = $1
UNION ALL
SELECT id, state, queue, kind, priority, args, metadata, tags, attempt, max_attempts, errors, timeout_ms, created_at, run_at,
    attempted_at, finalized_at, NULL, NULL, false
FROM {schema}finished_jobs WHERE id = $1
LIMIT 1;

-- name: JobList
SELECT * FROM (
    SELECT id, CASE WHEN state = 'available' AND run_at > $5 THEN CASE WHEN attempt = 0 THEN 'scheduled' ELSE 'retryable' END ELSE state END AS ustate,
        queue, kind, priority, args, metadata, tags, attempt, max_attempts, errors, timeout_ms, created_at, run_at,
        attempted_at, NULL::timestamptz AS finalized_at, lease_owner, lease_expires_at, cancel_requested
    FROM {schema}jobs
    WHERE id > $3 AND ($1 = '' OR queue = $1) AND ($2 = '' OR kind = $2)
    UNION ALL
    SELECT id, state, queue, kind, priority, args, metadata, tags, attempt, max_attempts, errors, timeout_ms, created_at, run_at,
        attempted_at, finalized_at, NULL, NULL, false
    FROM {schema}finished_jobs
    WHERE id > $3 AND ($1 = '' OR queue = $1) AND ($2 = '' OR kind = $2)
) j
WHERE cardinality($4::text[]) = 0 OR ustate = ANY($4::text[])
ORDER BY id
LIMIT $6;

-- name: JobCancel
WITH done AS (
    DELETE FROM {schema}jobs WHERE id = $1 AND state IN ('available', 'blocked') RETURNING *
),
moved AS (
    INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, args, metadata, tags, attempt,
        max_attempts, errors, timeout_ms, created_at, run_at, attempted_at, finalized_at)
    SELECT id, 'cancelled', queue, kind, priority, args, metadata, tags, attempt, max_attempts,
        errors, timeout_ms, created_at, run_at, attempted_at, $2
    FROM done
),
flagged AS (
    UPDATE {schema}jobs SET cancel_requested = true WHERE id = $1 AND state = 'running' RETURNING id
)
SELECT (SELECT count(*) FROM done) + (SELECT count(*) FROM flagged);

-- name: JobRetry
WITH revived AS (
    DELETE FROM {schema}finished_jobs WHERE id = $1 RETURNING *
),
inserted AS (
    INSERT INTO {schema}jobs (id, state, queue, kind, priority, args, metadata, tags, attempt, max_attempts,
        errors, timeout_ms, created_at, run_at, attempted_at)
    SELECT id, 'available', queue, kind, priority, args, metadata, tags, attempt, greatest(max_attempts, attempt + 1),
        errors, timeout_ms, created_at, $2, attempted_at
    FROM revived
    RETURNING queue
),
rescheduled AS (
    UPDATE {schema}jobs SET run_at = $2 WHERE id = $1 AND state = 'available' RETURNING queue
)
SELECT queue FROM inserted UNION ALL SELECT queue FROM rescheduled;

-- name: JobCountByState
SELECT CASE WHEN state = 'available' AND run_at > now() THEN CASE WHEN attempt = 0 THEN 'scheduled' ELSE 'retryable' END ELSE state END AS s, count(*)
FROM {schema}jobs WHERE $1 = '' OR queue = $1 GROUP BY s
UNION ALL
SELECT state, count(*) FROM {schema}finished_jobs WHERE $1 = '' OR queue = $1 GROUP BY state;

-- name: LeaderElect
INSERT INTO {schema}leaders (name, leader_id, expires_at)
VALUES ($1, $2, now() + $3::float8 * interval '1 millisecond')
ON CONFLICT (name) DO UPDATE
SET leader_id = excluded.leader_id, expires_at = excluded.expires_at
WHERE {schema}leaders.leader_id = excluded.leader_id OR {schema}leaders.expires_at < now()
RETURNING leader_id;

-- name: LeaderResign
DELETE FROM {schema}leaders WHERE name = $1 AND leader_id = $2;

-- name: SchemaVersion
SELECT coalesce(max(version), 0) FROM {schema}schema_migrations;

-- name: MigrationsTable
CREATE TABLE IF NOT EXISTS {schema}schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);

-- name: MigrationRecord
INSERT INTO {schema}schema_migrations (version, name) VALUES ($1, $2);

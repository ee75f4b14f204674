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
-- job of its key is blocked, or pending on other jobs (a workflow step
-- holds its place in its key while it waits), and its key has room: the
-- jobs of the key already active plus those ahead of it in this batch stay
-- under its key_limit. Otherwise it waits as blocked. KeyLock on the same
-- keys runs first in the same transaction, so the count cannot go stale
-- before commit.
--
-- A unique job takes its key in unique_keys in this same statement, under
-- the unique index of held keys: the row is stored only if it got the key,
-- and a key that another job holds (or an earlier job of this batch took)
-- skips it. A key is held per kind, and per queue too for jobs inserted
-- with $15 (InsertParams.UniqueByQueue; queue '' stands for any), so that
-- one kind's keys never block another's. IDs are drawn from the jobs'
-- sequence first ($13 is the quoted table name) so that the key row can
-- name its job. A unique job carries flow bit 8 (FlowUnique), a keyed one
-- bit 16 (FlowKeyed). Routed jobs (droverdriver.Routing) take this
-- statement too, with their route key ($16) and routing ($17), NULL for
-- jobs without. Returns one row per
-- input job, in input order: its ID, or 0 when skipped as a duplicate.
WITH p AS (
    SELECT nextval(pg_get_serial_sequence($13, 'id')) AS id, p.*
    FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::jsonb[], $5::text[], $6::smallint[], $7::integer[],
            $8::timestamptz[], $9::bigint[], $10::text[], $11::integer[], $12::text[], $14::smallint[], $15::boolean[],
            $16::text[], $17::jsonb[])
        WITH ORDINALITY AS p(queue, kind, args, metadata, tags, priority, max_attempts, run_at, timeout_ms,
            ordering_key, key_limit, unique_key, unique_final, unique_by_queue, route, routing, ord)
),
gated AS (
    SELECT p.*,
        CASE WHEN p.ordering_key IS NULL THEN 'available'
             -- order: a key with a rate (key_rates) starts its jobs through
             -- KeyPromote, which runs next and spends the key's tokens.
             WHEN EXISTS (SELECT 1 FROM {schema}key_rates r WHERE r.queue = p.queue AND r.ordering_key = p.ordering_key)
             THEN 'blocked'
             WHEN NOT EXISTS (SELECT 1 FROM {schema}jobs j
                              WHERE j.queue = p.queue AND j.ordering_key = p.ordering_key AND j.state IN ('blocked', 'pending'))
              AND (SELECT count(*) FROM {schema}jobs j
                   WHERE j.queue = p.queue AND j.ordering_key = p.ordering_key AND j.state IN ('available', 'running'))
                  + row_number() OVER (PARTITION BY p.queue, p.ordering_key ORDER BY p.ord) <= p.key_limit
             THEN 'available'
             ELSE 'blocked' END AS state
    FROM p
),
claimed AS (
    INSERT INTO {schema}unique_keys (job_id, kind, queue, unique_key, final_states)
    SELECT id, kind, CASE WHEN unique_by_queue THEN queue ELSE '' END, unique_key, unique_final
    FROM p WHERE unique_key IS NOT NULL ORDER BY ord
    ON CONFLICT (kind, queue, unique_key) WHERE held DO NOTHING
    RETURNING job_id
),
inserted AS (
    INSERT INTO {schema}jobs (id, state, queue, kind, args, metadata, tags, priority, max_attempts, run_at, timeout_ms,
        ordering_key, key_limit, route, routing, flow)
    SELECT id, state, queue, kind, args, metadata, string_to_array(tags, ','), priority, max_attempts, coalesce(run_at, now()),
        timeout_ms, ordering_key, key_limit, route, routing,
        CASE WHEN unique_key IS NULL THEN 0 ELSE 8 /*FlowUnique*/ END | CASE WHEN ordering_key IS NULL THEN 0 ELSE 16 /*FlowKeyed*/ END
    FROM gated
    WHERE unique_key IS NULL OR id IN (SELECT job_id FROM claimed)
    ORDER BY ord
    RETURNING id
)
SELECT coalesce(i.id, 0) FROM p LEFT JOIN inserted i ON i.id = p.id ORDER BY p.ord;

-- name: KeyLock
-- Serialises, per (queue, ordering key), the transactions that count a
-- key's active jobs: keyed inserts and the finishes and sweeps that promote.
-- Transaction-scoped advisory locks, taken in one order and in one
-- statement per transaction, after any row locks the transaction takes, so
-- that two transactions never wait on each other in a cycle. Plain jobs
-- never take them. Keys share 256 locks by hash: a finish batch covering hundreds of
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
-- next waiting job. A keyed job pending on other jobs (a workflow step)
-- holds its place: promotion stops at it, and the settle that releases it
-- makes it blocked, then promotes its key. It returns how many jobs it
-- promoted and their queues, which the caller wakes once the transaction
-- has committed (waker.go). Runs under KeyLock.
--
-- A key with a rate (key_rates, KeyRate) spends one token per job promoted
-- and per job of $3, the keyed jobs this transaction retried after a failed
-- attempt (available again, with their backoff as run_at): bucket refills
-- the key's tokens up to now, the n-th job here keeps its run_at if a whole
-- n-th token exists, and otherwise runs at the time it will exist (a
-- scheduled job, claimable once due). spent leaves the bucket short of the
-- tokens reserved that way, so later promotions schedule after them. Keys
-- without a rate find no bucket row, and their retried jobs are left out.
WITH k AS (
    SELECT DISTINCT queue, ordering_key FROM unnest($1::text[], $2::text[]) AS k(queue, ordering_key)
),
next AS (
    SELECT c.id, c.queue, c.ordering_key, row_number() OVER (PARTITION BY c.queue, c.ordering_key ORDER BY c.id) AS n
    FROM (
        SELECT b.id, k.queue, k.ordering_key
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
            SELECT min(j.id) AS id FROM {schema}jobs j
            WHERE j.queue = k.queue AND j.ordering_key = k.ordering_key AND j.state = 'pending'
        ) pending
        CROSS JOIN LATERAL (
            SELECT j.id FROM {schema}jobs j
            WHERE j.queue = k.queue AND j.ordering_key = k.ordering_key AND j.state = 'blocked'
              AND (pending.id IS NULL OR j.id < pending.id)
            ORDER BY j.id
            LIMIT greatest(head.key_limit - active.n, 0)
        ) b
        UNION ALL
        SELECT j.id, j.queue, j.ordering_key FROM {schema}jobs j
        WHERE j.id = ANY($3::bigint[]) AND j.state = 'available'
          AND EXISTS (SELECT 1 FROM {schema}key_rates r WHERE r.queue = j.queue AND r.ordering_key = j.ordering_key)
    ) c
),
-- at is the clock read under KeyLock, not the transaction's start: a
-- transaction that started earlier but took the lock later must not move
-- refilled_at back, which would refill the same time twice.
bucket AS (
    SELECT r.queue, r.ordering_key, r.rate, r.period_ms, t.at,
        least(r.rate::float8, r.tokens + r.rate * extract(epoch FROM t.at - r.refilled_at)::float8 * 1000 / r.period_ms) AS tokens
    FROM {schema}key_rates r
    JOIN k ON r.queue = k.queue AND r.ordering_key = k.ordering_key
    CROSS JOIN (SELECT clock_timestamp() AS at) t
),
promoted AS (
    UPDATE {schema}jobs j
    SET state = 'available',
        run_at = CASE WHEN s.tokens IS NULL OR n.n <= s.tokens THEN j.run_at
            ELSE greatest(j.run_at, s.at + (n.n - s.tokens) * s.period_ms / s.rate * interval '1 millisecond') END
    FROM next n LEFT JOIN bucket s ON s.queue = n.queue AND s.ordering_key = n.ordering_key
    WHERE j.id = n.id
    RETURNING j.queue
),
spent AS (
    UPDATE {schema}key_rates r
    SET tokens = s.tokens - c.n, refilled_at = s.at
    FROM bucket s JOIN (SELECT queue, ordering_key, count(*) AS n FROM next GROUP BY queue, ordering_key) c
        ON c.queue = s.queue AND c.ordering_key = s.ordering_key
    WHERE r.queue = s.queue AND r.ordering_key = s.ordering_key
)
SELECT (SELECT count(*) FROM promoted),
    (SELECT coalesce(array_agg(DISTINCT queue), '{}') FROM promoted);

-- name: KeyRateSet
-- Stores the rate of keys inserted with KeyRate, before JobInsertKeyed in
-- the same transaction and under KeyLock: a new bucket starts full; a
-- changed rate keeps the tokens left, up to the new rate. The last job of
-- a key in the call sets its rate.
INSERT INTO {schema}key_rates AS r (queue, ordering_key, rate, period_ms, tokens, refilled_at)
SELECT DISTINCT ON (queue, ordering_key) queue, ordering_key, rate, period_ms, rate, clock_timestamp()
FROM unnest($1::text[], $2::text[], $3::integer[], $4::bigint[]) WITH ORDINALITY AS p(queue, ordering_key, rate, period_ms, ord)
ORDER BY queue, ordering_key, ord DESC
ON CONFLICT (queue, ordering_key) DO UPDATE
SET rate = excluded.rate, period_ms = excluded.period_ms, tokens = least(r.tokens, excluded.rate);

-- name: KeyRateIdle
-- Buckets the sweep may delete: full again, and no unfinished job of the
-- key in the hot table (a lookup in jobs_key_idx). At most $1.
SELECT r.queue, r.ordering_key FROM {schema}key_rates r
WHERE r.tokens + r.rate * extract(epoch FROM now() - r.refilled_at)::float8 * 1000 / r.period_ms >= r.rate
  AND NOT EXISTS (SELECT 1 FROM {schema}jobs j WHERE j.queue = r.queue AND j.ordering_key = r.ordering_key)
LIMIT $1;

-- name: KeyRatePrune
-- Deletes the buckets KeyRateIdle found, under KeyLock on their keys and
-- checking again: an insert that stored a rate and jobs for the key
-- meanwhile has committed (it held the lock), and its jobs keep the
-- bucket. A bucket deleted full is what an insert with KeyRate would
-- create anew.
DELETE FROM {schema}key_rates r
USING unnest($1::text[], $2::text[]) AS k(queue, ordering_key)
WHERE r.queue = k.queue AND r.ordering_key = k.ordering_key
  AND r.tokens + r.rate * extract(epoch FROM now() - r.refilled_at)::float8 * 1000 / r.period_ms >= r.rate
  AND NOT EXISTS (SELECT 1 FROM {schema}jobs j WHERE j.queue = r.queue AND j.ordering_key = r.ordering_key);

-- name: KeyBlocked
-- The keys that have blocked jobs, for the promotion sweep. The ordering_key
-- condition lets the planner use jobs_key_idx, which holds keyed rows only,
-- instead of scanning the hot table of a queue of plain jobs.
SELECT DISTINCT queue, ordering_key FROM {schema}jobs
WHERE state = 'blocked' AND ordering_key IS NOT NULL
LIMIT $1;

-- name: UniqueRelease
-- Frees the unique keys of the jobs in $1 that ended (are in
-- finished_jobs) in a final state their key's final_states does not list.
-- Runs in the transaction that ended them, after any KeyLock it takes
-- (keyed inserts take KeyLock before their unique key, so this keeps one
-- lock order). IDs of jobs that did not end, or hold no key, match
-- nothing, so callers may pass every job they flagged unique.
UPDATE {schema}unique_keys u
SET held = false
FROM {schema}finished_jobs f
WHERE u.job_id = ANY($1::bigint[]) AND u.held AND f.id = u.job_id
  AND u.final_states & CASE f.state WHEN 'completed' THEN 1 /*FinalCompleted*/ WHEN 'cancelled' THEN 2 /*FinalCancelled*/ ELSE 4 /*FinalDiscarded*/ END = 0;

-- name: UniqueRetake
-- $1 are jobs JobRetry just revived: each that gave up its unique key takes
-- it again, unless another job holds it now or an earlier job of $1 takes
-- the same key; those are returned with that job's ID (the caller then
-- rolls the retry back). A holder that has not committed yet makes the
-- update wait for it and then fail on the unique index, which the caller
-- reports the same way.
WITH mine AS (
    SELECT job_id, kind, queue, unique_key FROM {schema}unique_keys
    WHERE job_id = ANY($1::bigint[]) AND NOT held
),
held AS (
    SELECT mine.job_id, o.job_id AS holder FROM mine
    JOIN {schema}unique_keys o ON o.kind = mine.kind AND o.queue = mine.queue AND o.unique_key = mine.unique_key
    WHERE o.held
),
free AS (
    SELECT * FROM mine WHERE job_id NOT IN (SELECT job_id FROM held)
),
first AS (
    SELECT DISTINCT ON (kind, queue, unique_key) job_id, kind, queue, unique_key FROM free
    ORDER BY kind, queue, unique_key, job_id
),
taken AS (
    UPDATE {schema}unique_keys u SET held = true FROM first WHERE u.job_id = first.job_id
)
SELECT job_id, holder FROM held
UNION ALL
SELECT f.job_id, first.job_id FROM free f
JOIN first ON first.kind = f.kind AND first.queue = f.queue AND first.unique_key = f.unique_key AND first.job_id <> f.job_id;

-- name: Notify
-- Each payload names a queue, optionally followed by how many jobs it got
-- (wakeMsg in listener.go).
SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload;

-- name: QueuesDue
-- $1 queues, $2 now (NULL: the store's clock, as the claims read it).
-- Which of a client's queues have a job due (droverdriver.QueuesDueExecutor):
-- a client's poll is this one statement whatever the number of its queues,
-- each queue an EXISTS on the claim index of plain jobs or of routed ones.
SELECT q FROM unnest($1::text[]) AS q
WHERE EXISTS (SELECT 1 FROM {schema}jobs j WHERE j.state = 'available' AND j.queue = q AND j.route IS NULL
                AND j.run_at <= coalesce($2::timestamptz, now()))
   OR EXISTS (SELECT 1 FROM {schema}jobs j WHERE j.state = 'available' AND j.queue = q AND j.route IS NOT NULL
                AND j.run_at <= coalesce($2::timestamptz, now()));

-- name: JobClaim
-- The update finds the picked rows by their ctid, which the row locks keep
-- in place until commit: a TID scan instead of a primary-key lookup per row
-- (claims measured 20% faster). It returns them in the order they lie on
-- disk, so the executor sorts them (driver.SortClaimed), and leaves out the
-- queue and lease owner, which the caller passed.
--
-- attempted_at is clock_timestamp(), read once (an init plan) as the update
-- starts, rather than now(), the transaction's start: planning the claim
-- happens in between, and a keyed job promoted by a finish that committed
-- meanwhile would otherwise appear to have started before its predecessor
-- finished. One value for the whole claim, because the rows are updated
-- in disk order: per-row readings would make a later job of a key appear
-- to start before an earlier one claimed with it.
--
-- order: $5 is true for a queue with cluster-wide limits (stored in
-- queue_settings), whose claim runs inside the transaction of
-- QueueLimitTake and QueueLimitRoom (limits.go),
-- with $2 the room they found: it marks the rows it claims as limited, and
-- QueueLimitSpend then spends a rate token on each. Other queues' claims
-- are the statement alone: every part of it is planned at every run
-- (replan in executor.go), and a rate-limit part that did nothing for them
-- made up a quarter of an empty claim's cost.
--
-- $6 is the claim's lease token (driver.LeaseToken), stored on every row it
-- claims and left out of RETURNING, since the caller drew it.
--
-- $7 is the claimer's clock (ClaimParams.Now), NULL for the store's: a
-- test clock makes scheduled jobs due when the test says. Each claim is
-- planned with its parameters (replan), so a NULL folds away and the
-- index condition stays run_at <= now().
--
-- Variants (droverdriver.WithClaimAfter, WithClaimKinds,
-- WithClaimExceptKinds): JobClaimAfter adds $8-$10, the claim order
-- position to start past; JobClaimKinds and JobClaimExcept add $8, the
-- kinds to claim or to leave; their After forms add both, the kinds $11.
--
-- route IS NULL: plain jobs only, from jobs_claim_idx, which holds nothing
-- else (migration 016); routed jobs are claimed by JobClaimRouted, by
-- workers that say what they are.
WITH picked AS (
    SELECT ctid
    FROM {schema}jobs
    WHERE state = 'available' AND queue = $1 AND route IS NULL AND run_at <= coalesce($7::timestamptz, now()) /*after*/
    ORDER BY priority, run_at, id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
UPDATE {schema}jobs j
SET state = 'running',
    attempt = j.attempt + 1,
    attempted_at = (SELECT coalesce($7::timestamptz, clock_timestamp())),
    lease_owner = $3,
    lease_expires_at = now() + $4::float8 * interval '1 millisecond',
    limited = $5::boolean,
    lease_token = $6::uuid
WHERE j.ctid = ANY(ARRAY(SELECT ctid FROM picked))
RETURNING j.id, j.kind, j.priority, j.args, j.metadata, j.tags, j.attempt, j.max_attempts,
    j.errors, j.error_count, j.timeout_ms, j.created_at, j.run_at, j.attempted_at, j.lease_expires_at, j.cancel_requested,
    coalesce(j.batch_id, 0), j.flow, -- flow: what the finish must settle
    j.ordering_key -- order: the key tells the finish to promote (NULL for plain jobs)
;

-- name: JobClaimRouted
-- The claim of a worker that says what it is (ClaimParams.Worker): $10 its
-- type, $11 its name, $12 its labels (a JSON object), each NULL when it
-- has none, and $16 the route keys it can match
-- (droverdriver.Worker.RouteKeys: its type's "t:…", its name's "n:…",
-- "n*" for jobs aimed at several names when it has a name, "*" for jobs
-- that require labels alone when it has labels). It takes plain jobs and
-- the routed jobs it matches, in the claim order of them all, and reads
-- only the index ranges it can match: plain jobs from jobs_claim_idx, and
-- for each of its keys that key's range of jobs_route_idx. A worker never
-- walks past jobs of another type or aimed at another worker; within its
-- own keys it walks past the jobs whose other constraints it fails
-- (labels it lacks; a type other than its own on a job aimed at its name;
-- other names under "n*"). The test below is the one
-- droverdriver.Worker.Matches makes in Go.
--
-- Each range is claimed as JobClaim claims, up to $2 rows FOR UPDATE SKIP
-- LOCKED, and the first $2 of all of them in claim order are taken: rows
-- locked in one range but not taken are unlocked when the statement
-- commits, having kept other claimers off them for that long. The ranges
-- of the keys are one subquery run per key (LATERAL), which plans in
-- about half the time of one subquery per key written out.
--
-- $7 the claimer's clock (NULL: the store's), $8 the kinds (NULL: every
-- kind), $9 the kinds paused in the queue, left waiting (empty: none),
-- $13-$15 the claim order position to start past (NULL: from the head),
-- as JobClaim, JobClaimKinds, JobClaimExcept and JobClaimAfter.
-- Other parameters and the columns returned are JobClaim's.
WITH candidates AS (
    SELECT * FROM (
        SELECT ctid, priority, run_at, id FROM {schema}jobs
        WHERE state = 'available' AND queue = $1 AND route IS NULL AND run_at <= coalesce($7::timestamptz, now())
          AND ($8::text[] IS NULL OR kind = ANY($8::text[])) AND kind <> ALL(coalesce($9::text[], '{}'))
          AND ($13::smallint IS NULL OR (priority, run_at, id) > ($13::smallint, $14::timestamptz, $15::bigint))
        ORDER BY priority, run_at, id LIMIT $2 FOR UPDATE SKIP LOCKED) plain
    UNION ALL
    SELECT r.* FROM unnest($16::text[]) AS k(route) CROSS JOIN LATERAL (
        SELECT ctid, priority, run_at, id FROM {schema}jobs j
        WHERE j.state = 'available' AND j.queue = $1 AND j.route = k.route AND j.run_at <= coalesce($7::timestamptz, now())
          AND ($8::text[] IS NULL OR j.kind = ANY($8::text[])) AND j.kind <> ALL(coalesce($9::text[], '{}'))
          AND ($13::smallint IS NULL OR (j.priority, j.run_at, j.id) > ($13::smallint, $14::timestamptz, $15::bigint))
          AND (j.routing ->> 'type' IS NULL OR j.routing ->> 'type' = $10::text)
          AND (j.routing -> 'names' IS NULL OR j.routing -> 'names' @> jsonb_build_array($11::text))
          AND (j.routing -> 'labels' IS NULL OR j.routing -> 'labels' <@ $12::jsonb)
        ORDER BY j.priority, j.run_at, j.id LIMIT $2 FOR UPDATE SKIP LOCKED) r
),
picked AS (
    SELECT ctid FROM candidates ORDER BY priority, run_at, id LIMIT $2
)
UPDATE {schema}jobs j
SET state = 'running',
    attempt = j.attempt + 1,
    attempted_at = (SELECT coalesce($7::timestamptz, clock_timestamp())),
    lease_owner = $3,
    lease_expires_at = now() + $4::float8 * interval '1 millisecond',
    limited = $5::boolean,
    lease_token = $6::uuid
WHERE j.ctid = ANY(ARRAY(SELECT ctid FROM picked))
RETURNING j.id, j.kind, j.priority, j.args, j.metadata, j.tags, j.attempt, j.max_attempts,
    j.errors, j.error_count, j.timeout_ms, j.created_at, j.run_at, j.attempted_at, j.lease_expires_at, j.cancel_requested,
    coalesce(j.batch_id, 0), j.flow, j.ordering_key;

-- name: QueueHead
-- What the strict queue $1 waits on: the first job a limited claim took
-- that waits again (jobs_returned_idx, in the order they started), or
-- else the first waiting job in claim order, the smaller of the plain
-- index's first and the routed index's first of each route key; whether
-- the head is a returned job; and how many limited rows run.
WITH returned AS (
    SELECT id FROM {schema}jobs WHERE state = 'available' AND queue = $1 AND limited ORDER BY attempted_at, id LIMIT 1
),
fresh AS (
    SELECT id FROM (
        (SELECT priority, run_at, id FROM {schema}jobs
         WHERE state = 'available' AND queue = $1 AND route IS NULL ORDER BY priority, run_at, id LIMIT 1)
        UNION ALL
        (SELECT priority, run_at, id FROM {schema}jobs
         WHERE state = 'available' AND queue = $1 AND route IS NOT NULL ORDER BY priority, run_at, id LIMIT 1)
    ) f ORDER BY priority, run_at, id LIMIT 1
)
SELECT coalesce((SELECT id FROM returned), (SELECT id FROM fresh), 0)::bigint,
    EXISTS (SELECT 1 FROM returned),
    (SELECT count(*) FROM {schema}jobs WHERE queue = $1 AND limited AND state = 'running');

-- name: StrictClaimSettings
-- Sent first in the batch of a strict claim, for its transaction only:
--
-- plan_cache_mode: a batch prepares its statements, and a prepared
-- statement's cached generic plan, made while the hot table was small
-- (sequential scans), would stay in use as it grows (see replan in
-- executor.go). Planned afresh with its parameters, the claim keeps its
-- index scans.
--
-- synchronous_commit off: the claim holds the queue's settings row until
-- it commits, and every claim of the queue waits for that lock, so a
-- commit that waited for its WAL to reach the disk would put an fsync
-- between any two claims of the queue. A crash of the database can lose
-- the claims of the last wal_writer_delay (200 ms by default): their jobs
-- are then available again, at the head of the queue, and run again, as
-- after a worker's death; the results of the workers that held them are
-- rejected by the fence. Inserts and finishes stay durable, and a finish
-- that reached the disk carries its claim with it (the WAL is one log).
--
-- Not so on a primary with synchronous standbys (a highly available
-- database, docs/scaling.md): there the claim keeps the session's
-- setting and waits for the standby as inserts and finishes do. A
-- failover loses every commit the standby had not received, which is
-- not the last 200 ms but, behind a standby that stalls, all the claims
-- since it stalled: their jobs would be waiting again on the new primary
-- and run a second time at once, while the workers that claimed them
-- still run them (TestFailoverKeepsStrictClaims).
SELECT set_config('plan_cache_mode', 'force_custom_plan', true),
    set_config('synchronous_commit', CASE WHEN current_setting('synchronous_standby_names') = ''
        THEN 'off' ELSE current_setting('synchronous_commit') END, true);

-- fragment: strict_head
-- The head of a strict queue and the room its claim has (JobClaimStrict,
-- JobClaimStrictSlots): $1 the queue, $2 the most rows, $7 the claimer's
-- clock.
routes(route) AS (
    (SELECT route FROM {schema}jobs WHERE state = 'available' AND queue = $1 AND route IS NOT NULL ORDER BY route LIMIT 1)
    UNION ALL
    SELECT (SELECT j.route FROM {schema}jobs j
            WHERE j.state = 'available' AND j.queue = $1 AND j.route > r.route ORDER BY j.route LIMIT 1)
    FROM routes r WHERE r.route IS NOT NULL
),
settings AS (
    SELECT s.paused, s.max_running, s.strict, s.rate, s.period_ms, coalesce(l.tokens, 0) AS tokens,
        (SELECT count(*) FROM {schema}jobs r WHERE r.queue = $1 AND r.limited AND r.state = 'running') AS running
    FROM {schema}queue_settings s LEFT JOIN {schema}queue_limits l ON l.queue = s.queue
    WHERE s.queue = $1
),
room AS (
    SELECT coalesce((
        SELECT CASE WHEN paused THEN 0 ELSE greatest(0, least($2,
            CASE WHEN max_running > 0 THEN max_running - running ELSE $2 END,
            CASE WHEN strict > 0 THEN strict - running ELSE $2 END,
            CASE WHEN rate > 0 THEN floor(tokens)::integer ELSE $2 END)) END
        FROM settings), $2) AS n
),
returned AS (
    SELECT id, kind, routing, run_at <= coalesce($7::timestamptz, now()) AS due, row_number() OVER (ORDER BY attempted_at, id) AS n
    FROM {schema}jobs WHERE state = 'available' AND queue = $1 AND limited
),
fresh AS (
    SELECT id, kind, routing, row_number() OVER (ORDER BY priority, run_at, id) AS n FROM (
        SELECT c.* FROM (
            SELECT * FROM (
                SELECT id, kind, routing, priority, run_at FROM {schema}jobs
                WHERE state = 'available' AND queue = $1 AND route IS NULL AND run_at <= coalesce($7::timestamptz, now()) AND NOT limited
                ORDER BY priority, run_at, id LIMIT $2) plain
            UNION ALL
            SELECT h.* FROM routes r CROSS JOIN LATERAL (
                SELECT id, kind, routing, priority, run_at FROM {schema}jobs j
                WHERE j.state = 'available' AND j.queue = $1 AND j.route = r.route AND j.run_at <= coalesce($7::timestamptz, now()) AND NOT j.limited
                ORDER BY j.priority, j.run_at, j.id LIMIT $2) h
            WHERE r.route IS NOT NULL
        ) c
        ORDER BY c.priority, c.run_at, c.id LIMIT $2
    ) f
),
head AS (
    SELECT id, kind, routing, n FROM returned
    WHERE n < coalesce((SELECT min(n) FROM returned WHERE NOT due), 9223372036854775807)
    UNION ALL
    SELECT id, kind, routing, n FROM fresh WHERE NOT EXISTS (SELECT 1 FROM returned)
)

-- fragment: strict_spent
-- The rate tokens of a strict claim's jobs (claimed), spent at the start
-- it gave them, the bucket first refilled up to it, as QueueLimitSpend
-- spends a limited claim's; the bucket stays at QueueLimitTake's time
-- when the claimer gave its own clock ($7).
spent AS (
    UPDATE {schema}queue_limits l
    SET tokens = least(st.rate::float8,
            l.tokens + st.rate * extract(epoch FROM coalesce(c.at, l.refilled_at) - l.refilled_at)::float8 * 1000 / st.period_ms) - c.n,
        refilled_at = coalesce(c.at, l.refilled_at)
    FROM settings st, (SELECT count(*) AS n, CASE WHEN $7::timestamptz IS NULL THEN max(attempted_at) END AS at FROM claimed) c
    WHERE l.queue = $1 AND st.rate > 0
)

-- name: JobClaimStrict
-- The claim of a queue in strict order (queue_settings.strict), sent in
-- one round trip after QueueLimitTake, in the same implicit transaction:
-- QueueLimitTake locks the queue's settings row (and refills its rate
-- bucket), so the queue's claims take turns, and this statement, which
-- starts once it holds the lock, sees every claim committed before. It
-- reads the room itself, under the lock, from the settings row: none
-- while the queue is paused, and the queue's limited rows still running
-- stay within strict and max_running, each job needing a rate token; at
-- most $2. It spends the tokens of what it takes (spent), as
-- QueueLimitSpend does. One round trip
-- with the lock held only while it runs and commits: the limited claim's
-- separate statements would hold it for three.
--
-- It takes the head of the queue, skipping nothing, and no more of it
-- than the claimer can run: the longest run of head jobs it matches (their
-- kind among $8 and not paused ($9), and the worker $10-$12, as for JobClaimRouted, matching
-- their routing; a worker that said nothing of itself, $12 NULL, matches
-- plain jobs only). A head job it cannot run stops the claim there: it
-- waits for a worker that can, and nothing behind it starts first.
--
-- The head: jobs that a limited claim took and that wait again (a retry,
-- a release, a rescue: limited and available, from jobs_returned_idx)
-- come first, in the order they started, up to the first of them not due
-- yet; while any is back, nothing else starts, so a failing job keeps its
-- place as an SQS FIFO message does. Otherwise the first due jobs in
-- claim order (priority, run_at, id), merged from the plain index and,
-- for each route key that has jobs (found by a loose scan of
-- jobs_route_idx, one probe per key), the first $2 of that key: each key
-- is walked in order, so the merge costs a probe per key and row, not a
-- sort of the queue. No SKIP LOCKED: no other claim of the queue runs
-- meanwhile, and a head row an operator holds (a cancel) is waited for
-- rather than overtaken.
WITH RECURSIVE {strict_head},
mine AS (
    SELECT id, n, coalesce(($8::text[] IS NULL OR kind = ANY($8::text[])) AND kind <> ALL(coalesce($9::text[], '{}')) AND (routing IS NULL OR (
            $12::jsonb IS NOT NULL
            AND (routing ->> 'type' IS NULL OR routing ->> 'type' = $10::text)
            AND (routing -> 'names' IS NULL OR routing -> 'names' @> jsonb_build_array($11::text))
            AND (routing -> 'labels' IS NULL OR routing -> 'labels' <@ $12::jsonb))), false) AS ok
    FROM head
),
picked AS (
    SELECT id FROM mine
    WHERE n < coalesce((SELECT min(n) FROM mine WHERE NOT ok), 9223372036854775807) AND n <= (SELECT n FROM room)
    ORDER BY n LIMIT $2
),
claimed AS (
    UPDATE {schema}jobs j
    SET state = 'running',
        attempt = j.attempt + 1,
        attempted_at = (SELECT coalesce($7::timestamptz, clock_timestamp())),
        lease_owner = $3,
        lease_expires_at = now() + $4::float8 * interval '1 millisecond',
        limited = $5::boolean,
        lease_token = $6::uuid
    WHERE j.id = ANY(ARRAY(SELECT id FROM picked)) AND j.state = 'available'
    RETURNING j.id, j.kind, j.priority, j.args, j.metadata, j.tags, j.attempt, j.max_attempts,
        j.errors, j.error_count, j.timeout_ms, j.created_at, j.run_at, j.attempted_at, j.lease_expires_at, j.cancel_requested,
        coalesce(j.batch_id, 0), j.flow, j.ordering_key
),
{strict_spent}
SELECT * FROM claimed;

-- name: JobClaimStrictSlots
-- JobClaimStrict for several claimers at once (droverdriver.SlotClaimer),
-- in the same batch after QueueLimitTake: the claimers' slots are $3
-- their owners, $6 their lease tokens, $10 their types, $11 their names
-- and $12 their labels (a JSON array of objects, one per slot), the
-- other parameters JobClaimStrict's. The head is walked in order, each
-- job going to the first slot not yet given one that can run it (assign,
-- one step per job); the first job that no slot left can run stops the
-- claim there, as a job its one claimer cannot run stops JobClaimStrict.
-- So the claimers of a strict queue, whatever their types, wait for one
-- turn on its settings row instead of one each, and every job is stored
-- under the owner and token of the claimer it goes to.
WITH RECURSIVE {strict_head},
slots AS (
    SELECT s.i, s.owner, s.token, s.type, s.name, $12::jsonb -> (s.i::integer - 1) AS labels
    FROM unnest($3::text[], $6::uuid[], $10::text[], $11::text[]) WITH ORDINALITY AS s(owner, token, type, name, i)
),
assign(n, slot, used) AS (
    SELECT 0::bigint, 0::bigint, '{}'::bigint[]
    UNION ALL
    SELECT h.n, s.i, a.used || s.i
    FROM assign a JOIN head h ON h.n = a.n + 1
    CROSS JOIN LATERAL (
        SELECT s.i FROM slots s
        WHERE s.i <> ALL(a.used) AND h.n <= (SELECT n FROM room)
          AND coalesce(($8::text[] IS NULL OR h.kind = ANY($8::text[])) AND h.kind <> ALL(coalesce($9::text[], '{}')) AND (h.routing IS NULL OR (
              (h.routing ->> 'type' IS NULL OR h.routing ->> 'type' = s.type)
              AND (h.routing -> 'names' IS NULL OR h.routing -> 'names' @> jsonb_build_array(s.name))
              AND (h.routing -> 'labels' IS NULL OR h.routing -> 'labels' <@ s.labels))), false)
        ORDER BY s.i LIMIT 1) s
),
picked AS (
    SELECT h.id, a.slot FROM assign a JOIN head h ON h.n = a.n
),
claimed AS (
    UPDATE {schema}jobs j
    SET state = 'running',
        attempt = j.attempt + 1,
        attempted_at = (SELECT coalesce($7::timestamptz, clock_timestamp())),
        lease_owner = s.owner,
        lease_expires_at = now() + $4::float8 * interval '1 millisecond',
        limited = $5::boolean,
        lease_token = s.token
    FROM picked p JOIN slots s ON s.i = p.slot
    WHERE j.id = p.id AND j.state = 'available'
    RETURNING j.id, j.kind, j.priority, j.args, j.metadata, j.tags, j.attempt, j.max_attempts,
        j.errors, j.error_count, j.timeout_ms, j.created_at, j.run_at, j.attempted_at, j.lease_expires_at, j.cancel_requested,
        coalesce(j.batch_id, 0), j.flow, j.ordering_key, j.lease_owner, j.lease_token, j.routing
),
{strict_spent}
SELECT * FROM claimed;

-- name: QueueLimitTake
-- Locks the queue's stored settings row and refills its rate bucket for
-- the time since the last limited claim. The lock is held until the
-- claim's transaction commits, so the limited claims of one queue take
-- turns (and a settings change waits for them); claims of other queues
-- never touch it. The limits come from the row, never from the claimer.
--
-- at is the clock read once the row is locked (an init plan, run when the
-- row of s is first projected), not now(), the transaction's start: a
-- claim that began before another but waited for the lock behind it would
-- move refilled_at back, and the next refill would count the same time
-- twice, letting more jobs start in a period than the bucket allows.
-- KeyPromote reads its clock under its lock for the same reason.
WITH s AS (
    SELECT queue, rate, period_ms FROM {schema}queue_settings WHERE queue = $1 FOR UPDATE
),
t AS (SELECT clock_timestamp() AS at)
INSERT INTO {schema}queue_limits AS l (queue, tokens, refilled_at)
SELECT queue, rate, (SELECT at FROM t) FROM s
ON CONFLICT (queue) DO UPDATE
SET tokens = (SELECT CASE WHEN s.rate = 0 THEN 0
                  ELSE least(s.rate::float8,
                      l.tokens + s.rate * extract(epoch FROM (SELECT at FROM t) - l.refilled_at)::float8 * 1000 / s.period_ms) END
              FROM s),
    refilled_at = (SELECT at FROM t);

-- name: QueueLimitSpend
-- Spends a rate token on each of the $2 jobs the claim took, in the claim's
-- transaction, which holds the queue's settings row since QueueLimitTake
-- (so the rate QueueLimitRoom read is still the stored one). The bucket is
-- first refilled up to $3, the start the claim gave its jobs
-- (attempted_at), and spent there, so that the starts stored are the
-- times of the bucket's spends and no period of starts holds more than a
-- full bucket and one period's refill. Spent at QueueLimitTake's time, the
-- bucket would run behind the starts by as long as the claim took in
-- between, and a period of starts could hold that much refill more. $3 is
-- NULL when the claimer gave its own clock (ClaimParams.Now), which is
-- not the store's: the bucket then stays at QueueLimitTake's time.
UPDATE {schema}queue_limits l
SET tokens = least(s.rate::float8,
        l.tokens + s.rate * extract(epoch FROM coalesce($3::timestamptz, l.refilled_at) - l.refilled_at)::float8 * 1000 / s.period_ms) - $2,
    refilled_at = coalesce($3::timestamptz, l.refilled_at)
FROM {schema}queue_settings s
WHERE l.queue = $1 AND s.queue = $1;

-- name: QueueLimitRoom
-- How many jobs the claim may take, at most $2: none while the queue is
-- paused; the queue's rows claimed under its limits and still running
-- (counted from jobs_limited_idx) stay within max_running, and within
-- strict for a queue in strict order; and each job needs a whole token.
-- The second column says whether the queue has a rate, so that
-- QueueLimitSpend runs only then, the third whether it is in strict
-- order, so that the claim takes its head (JobClaimStrict): both read
-- here, under the lock, not from the claimer's cached settings. A
-- statement of its own, after QueueLimitTake took the row lock, so that
-- its snapshot sees every limited claim that committed before. A queue
-- whose settings row is gone is claimed as if unlimited ($2, no rate).
SELECT coalesce(r.room, $2), coalesce(r.rated, false), coalesce(r.strict, false)
FROM (SELECT 1) one LEFT JOIN LATERAL (
    SELECT CASE WHEN s.paused THEN 0 ELSE greatest(0, least($2,
            CASE WHEN s.max_running > 0 THEN s.max_running - n.running ELSE $2 END,
            CASE WHEN s.strict > 0 THEN s.strict - n.running ELSE $2 END,
            CASE WHEN s.rate > 0 THEN floor(coalesce(l.tokens, 0))::integer ELSE $2 END)) END AS room,
        s.rate > 0 AS rated, s.strict > 0 AS strict
    FROM {schema}queue_settings s LEFT JOIN {schema}queue_limits l ON l.queue = s.queue
    CROSS JOIN LATERAL (
        SELECT CASE WHEN s.max_running > 0 OR s.strict > 0
            THEN (SELECT count(*) FROM {schema}jobs r WHERE r.queue = $1 AND r.limited AND r.state = 'running')
            ELSE 0 END AS running
    ) n
    WHERE s.queue = $1
) r ON true;

-- name: QueueSettingsGet
SELECT queue, paused, max_running, rate, period_ms, strict, updated_at, paused_kinds FROM {schema}queue_settings WHERE queue = $1;

-- name: QueueKnown
-- $1 queue. Every arm is an index lookup (finished_jobs_queue_idx of
-- migration 028 for finished jobs); the workers' registry is small.
SELECT EXISTS (SELECT 1 FROM {schema}queue_settings WHERE queue = $1)
    OR EXISTS (SELECT 1 FROM {schema}jobs WHERE queue = $1)
    OR EXISTS (SELECT 1 FROM {schema}workers WHERE $1 = ANY (queues))
    OR EXISTS (SELECT 1 FROM {schema}finished_jobs WHERE queue = $1);

-- name: QueueSettingsList
SELECT queue, paused, max_running, rate, period_ms, strict, updated_at, paused_kinds FROM {schema}queue_settings ORDER BY queue;

-- name: QueueSettingsSet
-- Writes the settings given and keeps the others: $2 paused, $3 whether
-- $4-$6 (max running, rate, period in ms) replace the limits, $7 strict.
-- NULL $2 or $7 keeps the stored value. $8 are kinds to add to the paused
-- kinds, $9 kinds to take out of them; the rest of the stored list stays,
-- sorted and without duplicates. The executor sends the settings notice
-- in the same transaction, so listeners hear it once the row is visible.
INSERT INTO {schema}queue_settings AS s (queue, paused, max_running, rate, period_ms, strict, updated_at, paused_kinds)
VALUES ($1, coalesce($2::boolean, false),
    CASE WHEN $3::boolean THEN $4::integer ELSE 0 END,
    CASE WHEN $3::boolean THEN $5::integer ELSE 0 END,
    CASE WHEN $3::boolean THEN $6::bigint ELSE 0 END, coalesce($7::integer, 0), now(),
    ARRAY(SELECT DISTINCT k FROM unnest($8::text[]) AS k WHERE k <> ALL(coalesce($9::text[], '{}')) ORDER BY k))
ON CONFLICT (queue) DO UPDATE
SET paused = coalesce($2::boolean, s.paused),
    max_running = CASE WHEN $3::boolean THEN excluded.max_running ELSE s.max_running END,
    rate = CASE WHEN $3::boolean THEN excluded.rate ELSE s.rate END,
    period_ms = CASE WHEN $3::boolean THEN excluded.period_ms ELSE s.period_ms END,
    strict = coalesce($7::integer, s.strict),
    updated_at = now(),
    paused_kinds = ARRAY(SELECT DISTINCT k FROM unnest(s.paused_kinds || coalesce($8::text[], '{}')) AS k
                         WHERE k <> ALL(coalesce($9::text[], '{}')) ORDER BY k)
RETURNING queue, paused, max_running, rate, period_ms, strict, updated_at, paused_kinds;

-- name: JobFinish
-- Outcomes: 1 completed, 2 retry, 3 discarded, 4 cancelled, 5 released.
-- Every result is fenced by (id, attempt, lease token, state running). Rows
-- that finish move to finished_jobs; retried and released rows stay and
-- wait again, their lease token cleared, a released one from its run_at
-- when given (a snooze) or now. A retry or release of a job whose
-- cancel was requested finishes it as cancelled instead, and a retry of a
-- job whose stored max_attempts it used up finishes it as discarded: the
-- store decides that, not the caller (a remote worker could claim any
-- max_attempts).
--
-- $1 lists the jobs' IDs. $2 is a JSON object keyed by job ID, one result
-- each as [attempt, outcome, error, run_at, output, forget, lease token]:
-- the error to record, when a retry is due, the output a completed job
-- stores (null when none), whether a completed job is forgotten and the
-- token its claim issued. An error joins the job's last {errors_kept}
-- (driver.ErrorsKept), the oldest dropped, and counts in error_count.
-- The rows are found by ID
-- and each reads its result from $2, with no join, for the reason
-- JobComplete gives.
--
-- $3 are the flow bits that turn a job away (FinishParams.Refuse): on the
-- plain path FlowEnd (27), so a job whose stored flow says its end must do
-- more (bits 1 and 2: settle; 8: free its unique key; 16: promote its key)
-- is not finished here, even if its claimed row said otherwise (a
-- dependant was added while it ran, or a remote worker did not echo the
-- bits); the engine sends such results again with $3 = 0, in a transaction
-- that then does what the returned rows ask for (engine/finish.go).
--
-- Returns each job it finished or put back to wait, with its state after
-- the statement, its flow & FlowEnd, queue and ordering key.
--
-- A forgotten completion (Config.DeleteCompleted) deletes its job instead
-- of moving it: one write instead of two. A job that stores a result,
-- belongs to a batch or a workflow, or holds a unique key (FlowKeep, 15) is
-- moved regardless, because reads and inserts after it need its row.
WITH done AS (
    DELETE FROM {schema}jobs j
    WHERE j.id = ANY($1::bigint[]) AND j.state = 'running'
      AND j.attempt = ($2::jsonb -> j.id::text ->> 0)::integer
      AND j.lease_token = ($2::jsonb -> j.id::text ->> 6)::uuid
      AND (($2::jsonb -> j.id::text ->> 1)::integer IN (1 /*OutcomeCompleted*/, 3 /*OutcomeDiscarded*/, 4 /*OutcomeCancelled*/) OR j.cancel_requested
           OR (($2::jsonb -> j.id::text ->> 1)::integer = 2 /*OutcomeRetry*/ AND j.attempt >= j.max_attempts))
      AND j.flow & $3::integer = 0
    RETURNING j.*, $2::jsonb -> j.id::text AS r
),
ended AS (
    SELECT done.*, (r ->> 1)::integer AS outcome, nullif(r -> 2, 'null') AS new_error,
        nullif(r -> 4, 'null') AS output, (r ->> 5)::boolean AS forget,
        CASE WHEN (r ->> 1)::integer = 1 /*OutcomeCompleted*/ THEN 'completed'
             WHEN (r ->> 1)::integer = 3 /*OutcomeDiscarded*/ OR ((r ->> 1)::integer = 2 /*OutcomeRetry*/ AND NOT cancel_requested) THEN 'discarded'
             ELSE 'cancelled' END AS final_state
    FROM done
),
moved AS (
    INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, args, metadata, tags, attempt,
        max_attempts, errors, error_count, timeout_ms, created_at, run_at, attempted_at, finalized_at, batch_id, flow,
        result, ordering_key, key_limit, route, routing) -- order, routing: kept for JobRetry (NULL and 0 for plain jobs)
    SELECT id, final_state, queue, kind, priority, args, metadata, tags, attempt, max_attempts,
        CASE WHEN new_error IS NULL THEN errors
             ELSE jsonb_path_query_array(coalesce(errors, '[]'::jsonb) || jsonb_build_array(new_error),
                                         '$[last - {errors_kept} + 1 to last]') END,
        error_count + (new_error IS NOT NULL)::integer,
        timeout_ms, created_at, run_at, attempted_at, now(), batch_id, flow, CASE WHEN outcome = 1 /*OutcomeCompleted*/ THEN output END,
        ordering_key, key_limit, route, routing
    FROM ended
    WHERE NOT (forget AND outcome = 1 /*OutcomeCompleted*/ AND output IS NULL AND flow & 15 /*FlowKeep*/ = 0 AND batch_id IS NULL)
),
waiting AS (
    UPDATE {schema}jobs j
    SET state = 'available',
        run_at = CASE WHEN ($2::jsonb -> j.id::text ->> 1)::integer = 5 /*OutcomeReleased*/
                      THEN coalesce(($2::jsonb -> j.id::text ->> 3)::timestamptz, now())
                      ELSE ($2::jsonb -> j.id::text ->> 3)::timestamptz END,
        attempt = CASE WHEN ($2::jsonb -> j.id::text ->> 1)::integer = 5 /*OutcomeReleased*/ THEN j.attempt - 1 ELSE j.attempt END,
        errors = CASE WHEN nullif($2::jsonb -> j.id::text -> 2, 'null') IS NULL THEN j.errors
                      ELSE jsonb_path_query_array(coalesce(j.errors, '[]'::jsonb) || jsonb_build_array($2::jsonb -> j.id::text -> 2),
                                                  '$[last - {errors_kept} + 1 to last]') END,
        error_count = j.error_count + (nullif($2::jsonb -> j.id::text -> 2, 'null') IS NOT NULL)::integer,
        lease_owner = NULL,
        lease_expires_at = NULL,
        lease_token = NULL
    WHERE j.id = ANY($1::bigint[]) AND j.state = 'running'
      AND j.attempt = ($2::jsonb -> j.id::text ->> 0)::integer
      AND j.lease_token = ($2::jsonb -> j.id::text ->> 6)::uuid
      AND (($2::jsonb -> j.id::text ->> 1)::integer = 5 /*OutcomeReleased*/
           OR (($2::jsonb -> j.id::text ->> 1)::integer = 2 /*OutcomeRetry*/ AND j.attempt < j.max_attempts))
      AND NOT j.cancel_requested AND j.flow & $3::integer = 0
    RETURNING j.id, j.flow, j.queue, j.ordering_key
)
SELECT id, final_state, flow & 27 /*FlowEnd*/, queue, ordering_key FROM ended
UNION ALL
SELECT id, 'available', flow & 27 /*FlowEnd*/, queue, ordering_key FROM waiting;

-- name: JobComplete
-- JobFinish for the commonest flush: jobs that all completed without an
-- error. The same fence, the same rows and the same columns returned, in a
-- statement with half of JobFinish's planning cost (pgbench, one client,
-- 0.25 ms against 0.49 ms), which every flush pays (replan in executor.go).
-- $1 lists the jobs' IDs and $2 the same jobs as 'id:attempt' keys; $6
-- lists the distinct lease tokens of the results (one per claim they came
-- from, so a handful). Together they are the fence: a row must match its
-- key and hold one of the tokens. That is as strict as pairing each token
-- with its job, because a caller can only present tokens it was given, and
-- a job it does not hold carries a token it was not given; and it keeps the
-- per-row work to an integer key and a uuid compared with a short array,
-- where a per-row 'id:attempt:token' text cost a uuid's text form per row.
-- $3 is a JSON object of the results completed jobs store, keyed by job ID
-- (NULL when none has one); $4 is JobFinish's $3 (the flow bits refused),
-- and $5 is Result.Forget, the same for every result of the flush: a job is
-- then deleted instead of moved unless it stores a result or belongs to a
-- batch or a workflow.
--
-- It returns what JobFinish does, one row per flow, queue and ordering key
-- with the IDs of its jobs (readCompleted), the state being completed: a
-- flush of plain jobs is one row and one array instead of a row per job
-- (reading them took 0.36 µs of a noop job's client CPU, now 0.16).
--
-- No join: the rows are found by ID and fenced by a key test, which
-- PostgreSQL hashes for a constant array, so the plan is a lookup whatever
-- the planner believes about running jobs. Joined with unnest() instead,
-- statistics taken while no job ran (an ANALYZE after a quiet spell, or
-- before a backlog starts) had the planner expect one running row and loop
-- over the whole batch for each running job: 0.3-1.7 s per 1,000-job
-- flush, measured in `drover bench dag`.
WITH done AS (
    DELETE FROM {schema}jobs j
    WHERE j.id = ANY($1::bigint[]) AND j.id || ':' || j.attempt = ANY($2::text[])
      AND j.lease_token = ANY($6::uuid[])
      AND j.state = 'running' AND j.flow & $4::integer = 0
    RETURNING j.*, $3::jsonb -> j.id::text AS output
),
moved AS (
    INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, args, metadata, tags, attempt,
        max_attempts, errors, error_count, timeout_ms, created_at, run_at, attempted_at, finalized_at, batch_id, flow,
        result, ordering_key, key_limit, route, routing)
    SELECT id, 'completed', queue, kind, priority, args, metadata, tags, attempt, max_attempts, errors, error_count,
        timeout_ms, created_at, run_at, attempted_at, now(), batch_id, flow, output, ordering_key, key_limit, route, routing
    FROM done
    WHERE NOT ($5 AND output IS NULL AND flow & 15 /*FlowKeep*/ = 0 AND batch_id IS NULL)
)
SELECT flow & 27 /*FlowEnd*/, queue, ordering_key, array_agg(id) FROM done GROUP BY 1, 2, 3;

-- name: JobHeartbeat
-- A heartbeat never waits for a row lock. It holds the locks of every row it
-- extends until it commits, so if it also waited it could deadlock with a
-- finish of the same process that locks some of those rows in another order
-- (measured: a few deadlocks a minute under steady load). A row some other
-- statement holds (that finish, an admin's cancel) is skipped this round and
-- still counts as held while the snapshot shows it running under this
-- attempt; a lease is extended every third of its length, so one skipped
-- round never lets it expire.
--
-- $1 lists the jobs' IDs, $2 the same jobs as 'id:attempt' keys and $4
-- the distinct lease tokens they were claimed with, fenced as JobComplete
-- is: a caller without the claim's token extends nothing. The statement returns the jobs still held, and the caller counts the others
-- lost. Every table is reached by ID, with no join, for the reason
-- JobComplete gives.
WITH mine AS (
    SELECT j.id, j.cancel_requested
    FROM {schema}jobs j
    WHERE j.id = ANY($1::bigint[]) AND j.id || ':' || j.attempt = ANY($2::text[])
      AND j.lease_token = ANY($4::uuid[]) AND j.state = 'running'
),
locked AS (
    SELECT j.id
    FROM {schema}jobs j
    WHERE j.id = ANY($1::bigint[]) AND j.id || ':' || j.attempt = ANY($2::text[])
      AND j.lease_token = ANY($4::uuid[]) AND j.state = 'running'
    FOR UPDATE OF j SKIP LOCKED
),
extended AS (
    UPDATE {schema}jobs j
    SET lease_expires_at = now() + $3::float8 * interval '1 millisecond'
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked))
)
SELECT id, cancel_requested FROM mine;

-- name: JobRescue
-- lease_owner IS NOT NULL (every running job has one) is the predicate of
-- jobs_running_idx, which this pass reads (migration 027).
WITH expired AS (
    SELECT id
    FROM {schema}jobs
    WHERE state = 'running' AND lease_owner IS NOT NULL AND lease_expires_at < $1
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
        max_attempts, errors, error_count, timeout_ms, created_at, run_at, attempted_at, finalized_at, batch_id, flow,
        ordering_key, key_limit, route, routing)
    SELECT id, CASE WHEN cancel_requested THEN 'cancelled' ELSE 'discarded' END,
        queue, kind, priority, args, metadata, tags, attempt, max_attempts,
        jsonb_path_query_array(coalesce(errors, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
            'attempt', attempt, 'at', now(), 'error', 'lease expired: the worker stopped heartbeating (crashed or lost its connection)')),
            '$[last - {errors_kept} + 1 to last]'),
        error_count + 1,
        timeout_ms, created_at, run_at, attempted_at, now(), batch_id, flow, ordering_key, key_limit, route, routing
    FROM done
),
waiting AS (
    UPDATE {schema}jobs j
    SET state = 'available',
        run_at = now(),
        errors = jsonb_path_query_array(coalesce(j.errors, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
            'attempt', j.attempt, 'at', now(), 'error', 'lease expired: the worker stopped heartbeating (crashed or lost its connection)')),
            '$[last - {errors_kept} + 1 to last]'),
        error_count = j.error_count + 1,
        lease_owner = NULL,
        lease_expires_at = NULL,
        lease_token = NULL
    FROM expired
    WHERE j.id = expired.id AND j.attempt < j.max_attempts AND NOT j.cancel_requested
    RETURNING j.id, j.flow, j.queue, j.ordering_key
)
-- Each job it moved, as JobFinish returns them: the engine settles, frees
-- and promotes from these rows in the same transaction (engine.Rescue).
SELECT id, CASE WHEN cancel_requested THEN 'cancelled' ELSE 'discarded' END, flow & 27 /*FlowEnd*/, queue, ordering_key FROM done
UNION ALL
SELECT id, 'available', flow & 27 /*FlowEnd*/, queue, ordering_key FROM waiting;

-- name: JobPrune
-- $5 is the latest of the cutoffs: no row past it can be due, and the bound
-- lets the BRIN index skip every recent block range that is summarised
-- (the minute sample summarises them each minute). A pruned unique job
-- (flow bit 8) takes its unique_keys row with it, held or not: a key kept
-- by a finished job is free once that job is gone.
WITH pruned AS (
    DELETE FROM {schema}finished_jobs
    WHERE id IN (
        SELECT id FROM {schema}finished_jobs
        WHERE finalized_at < $5
          AND ((state = 'completed' AND finalized_at < $1)
           OR (state = 'cancelled' AND finalized_at < $2)
           OR (state = 'discarded' AND finalized_at < $3))
        LIMIT $4
    )
    RETURNING id, flow
),
keys AS (
    DELETE FROM {schema}unique_keys WHERE job_id IN (SELECT id FROM pruned WHERE flow & 8 /*FlowUnique*/ <> 0)
)
SELECT count(*) FROM pruned;

-- name: JobGet
SELECT id, CASE WHEN state = 'available' AND run_at > now() THEN CASE WHEN attempt = 0 THEN 'scheduled' ELSE 'retryable' END ELSE state END,
    queue, kind, priority, args, metadata, tags, attempt, max_attempts, errors, error_count, timeout_ms, created_at,
    run_at, attempted_at, NULL::timestamptz, lease_owner, lease_expires_at, cancel_requested, batch_id, ordering_key, routing
FROM {schema}jobs WHERE id = $1
UNION ALL
SELECT id, state, queue, kind, priority, args, metadata, tags, attempt, max_attempts, errors, error_count, timeout_ms,
    created_at, run_at, attempted_at, finalized_at, NULL, NULL, false, batch_id, ordering_key, routing
FROM {schema}finished_jobs WHERE id = $1
LIMIT 1;

-- fragment: search_waiting
-- The hot table's jobs inside a search window, with the state users see
-- (scheduled and retryable are available rows whose run_at is ahead of
-- $15, now): the rows JobList and JobMatchCount filter with search_match.
-- Every search statement takes the same parameters: $1-$14 the filter,
-- $15 now, $16 and $17 the window's exclusive bounds, $18 the limit, $19
-- and $20 whether to read the hot table and finished jobs. A search
-- walks the primary key between $16 and $17, so it costs what its
-- window holds, however deep the window lies.
SELECT id, CASE WHEN state = 'available' AND run_at > $15 THEN CASE WHEN attempt = 0 THEN 'scheduled' ELSE 'retryable' END ELSE state END AS state,
    queue, kind, priority, args, metadata, tags, attempt, max_attempts, errors, error_count, timeout_ms, created_at,
    run_at, attempted_at, NULL::timestamptz AS finalized_at, lease_owner, lease_expires_at, cancel_requested, batch_id, ordering_key, routing
FROM {schema}jobs WHERE $19 AND id > $16 AND id < $17

-- fragment: search_finished
SELECT id, state, queue, kind, priority, args, metadata, tags, attempt, max_attempts, errors, error_count, timeout_ms,
    created_at, run_at, attempted_at, finalized_at, NULL::text AS lease_owner, NULL::timestamptz AS lease_expires_at,
    false AS cancel_requested, batch_id, ordering_key, routing
FROM {schema}finished_jobs WHERE $20 AND id > $16 AND id < $17

-- fragment: search_match
-- The filter of a search over the columns of search_waiting or
-- search_finished: states, queue, kind, tags (all of them), args and
-- metadata containment, and each time's [from, to).
(cardinality($1::text[]) = 0 OR state = ANY($1::text[]))
AND ($2::text = '' OR queue = $2::text) AND ($3::text = '' OR kind = $3::text)
AND (cardinality($4::text[]) = 0 OR tags @> $4::text[])
AND ($5::jsonb IS NULL OR args @> $5::jsonb) AND ($6::jsonb IS NULL OR metadata @> $6::jsonb)
AND ($7::timestamptz IS NULL OR created_at >= $7::timestamptz) AND ($8::timestamptz IS NULL OR created_at < $8::timestamptz)
AND ($9::timestamptz IS NULL OR run_at >= $9::timestamptz) AND ($10::timestamptz IS NULL OR run_at < $10::timestamptz)
AND ($11::timestamptz IS NULL OR attempted_at >= $11::timestamptz) AND ($12::timestamptz IS NULL OR attempted_at < $12::timestamptz)
AND ($13::timestamptz IS NULL OR finalized_at >= $13::timestamptz) AND ($14::timestamptz IS NULL OR finalized_at < $14::timestamptz)

-- name: JobList
-- Each table is walked in ID order inside the window and stops at the
-- limit on its own, so a page costs the same deep into a large table as
-- at its start. (With the filters outside, the planner appended both
-- tables and sorted everything past the cursor: 1.3 s a page at 3.6
-- million finished jobs, quadratic over a listing.) JobListDesc is this
-- statement with every /*asc*/ made DESC.
SELECT * FROM (
    (SELECT * FROM ({search_waiting}) j WHERE {search_match} ORDER BY id /*asc*/ LIMIT $18)
    UNION ALL
    (SELECT * FROM ({search_finished}) j WHERE {search_match} ORDER BY id /*asc*/ LIMIT $18)
) j
ORDER BY id /*asc*/
LIMIT $18;

-- name: JobIDNext
-- Where the next window of a search starts: the first job ID in ($1, $2)
-- of a job matching the filter's states, queue ($5, '' for any) and kind
-- ($6, '' for any), in the hot table if $3 and in finished jobs if $4.
-- The hot table's available rows match when $7 takes due ones, $8
-- scheduled ones (ahead of $10, now, never attempted) or $9 retryable ones
-- (ahead, attempted before); its other rows when their state is one of
-- $11; finished jobs when their state is one of $12 ('{}': any). $13 says
-- the filter names a state, queue or kind: without, the hot table's next
-- job is its next ID, one step of its primary key, which the branches by
-- state would each look for on their own. Planned
-- afresh with its values (replan), so that the filters not given fold
-- away and each branch takes the path its values make cheapest: a
-- queue's available jobs from the claim indexes, finished jobs of a queue
-- or kind from finished_jobs_queue_idx or finished_jobs_kind_idx (one
-- entry, however rare the queue and wherever its jobs lie: migration 028),
-- failed ones from the failed indexes, and a filter most jobs match along
-- the primary key. The hot table's other rows (running, pending,
-- blocked) have no index by state, so their branch walks the primary key:
-- it looks only before the first match the indexed branches found
-- (first; $14, the far end of the range in the search's order, when they
-- found none), where alone its match would be the answer. Otherwise,
-- with none of those rows in a queue, it read every ID from $1 to the
-- end of the hot table: a bulk cancel of a million jobs waiting in one
-- queue read the rest of them again for every page of 1,000, a second a
-- page. JobIDPrev is this statement with /*min*/ made max, /*asc*/ made
-- DESC and /*before*/< made >.
WITH first AS (
    SELECT coalesce(/*min*/min(id), $14) AS id FROM (
        (SELECT id FROM {schema}jobs WHERE $3 AND NOT $13 AND id > $1 AND id < $2 ORDER BY id /*asc*/ LIMIT 1)
        UNION ALL
        (SELECT id FROM {schema}jobs
         WHERE $3 AND $13 AND ($7 OR $8 OR $9) AND state = 'available' AND route IS NULL AND id > $1 AND id < $2
           AND ($5::text = '' OR queue = $5::text) AND ($6::text = '' OR kind = $6::text)
           AND (($7 AND run_at <= $10) OR ($8 AND run_at > $10 AND attempt = 0) OR ($9 AND run_at > $10 AND attempt > 0))
         ORDER BY id /*asc*/ LIMIT 1)
        UNION ALL
        (SELECT id FROM {schema}jobs
         WHERE $3 AND $13 AND ($7 OR $8 OR $9) AND state = 'available' AND route IS NOT NULL AND id > $1 AND id < $2
           AND ($5::text = '' OR queue = $5::text) AND ($6::text = '' OR kind = $6::text)
           AND (($7 AND run_at <= $10) OR ($8 AND run_at > $10 AND attempt = 0) OR ($9 AND run_at > $10 AND attempt > 0))
         ORDER BY id /*asc*/ LIMIT 1)
        UNION ALL
        (SELECT id FROM {schema}finished_jobs
         WHERE $4 AND (cardinality($12::text[]) = 0 OR state = ANY($12::text[])) AND id > $1 AND id < $2
           AND ($5::text = '' OR queue = $5::text) AND ($6::text = '' OR kind = $6::text)
         ORDER BY id /*asc*/ LIMIT 1)
    ) j
)
SELECT coalesce(/*min*/min(id), 0) FROM (
    (SELECT id FROM first WHERE id > $1 AND id < $2)
    UNION ALL
    (SELECT id FROM {schema}jobs
     WHERE $3 AND $13 AND cardinality($11::text[]) > 0 AND state = ANY($11::text[]) AND id > $1 AND id < $2
       AND id /*before*/< (SELECT id FROM first)
       AND ($5::text = '' OR queue = $5::text) AND ($6::text = '' OR kind = $6::text)
     ORDER BY id /*asc*/ LIMIT 1)
) j;

-- name: JobIDBounds
-- Four ends of two primary keys.
SELECT coalesce((SELECT id FROM {schema}jobs ORDER BY id LIMIT 1), 0),
    coalesce((SELECT id FROM {schema}jobs ORDER BY id DESC LIMIT 1), 0),
    coalesce((SELECT id FROM {schema}finished_jobs ORDER BY id LIMIT 1), 0),
    coalesce((SELECT id FROM {schema}finished_jobs ORDER BY id DESC LIMIT 1), 0);

-- fragment: count_waiting
-- search_waiting with only the columns search_match reads, so that a count
-- copies no errors or results.
SELECT id, CASE WHEN state = 'available' AND run_at > $15 THEN CASE WHEN attempt = 0 THEN 'scheduled' ELSE 'retryable' END ELSE state END AS state,
    queue, kind, created_at, run_at, attempted_at, NULL::timestamptz AS finalized_at, tags, metadata, args
FROM {schema}jobs WHERE $19 AND id > $16 AND id < $17

-- fragment: count_finished
SELECT id, state, queue, kind, created_at, run_at, attempted_at, finalized_at, tags, metadata, args
FROM {schema}finished_jobs WHERE $20 AND id > $16 AND id < $17

-- name: JobMatchCount
-- The first $18 jobs of each table inside the window, and how many of
-- them match: one row per table, the first column true for finished jobs
-- (a table not read counts nothing).
SELECT false, count(*) FILTER (WHERE {search_match}), count(*), coalesce(max(id), 0)
FROM ({count_waiting} ORDER BY id LIMIT $18) j
UNION ALL
SELECT true, count(*) FILTER (WHERE {search_match}), count(*), coalesce(max(id), 0)
FROM ({count_finished} ORDER BY id LIMIT $18) j;

-- name: JobMatchCountByState
-- JobMatchCount per state, the filter's states ($1) empty: one row per
-- table and state found among the first $18 jobs of each table inside the
-- window, with how many of them match and how many were read.
SELECT false, state, count(*) FILTER (WHERE {search_match}), count(*)
FROM ({count_waiting} ORDER BY id LIMIT $18) j
GROUP BY state
UNION ALL
SELECT true, state, count(*) FILTER (WHERE {search_match}), count(*)
FROM ({count_finished} ORDER BY id LIMIT $18) j
GROUP BY state;

-- name: JobCancel
-- $1 job IDs, $2 now, $3 whether running jobs are flagged. A waiting job
-- (available, pending on other jobs, or blocked behind its key) is finished
-- at once, and returned as JobFinish returns the jobs it ends; a running
-- one not flagged yet is flagged, and returned in state running.
WITH done AS (
    DELETE FROM {schema}jobs WHERE id = ANY($1::bigint[]) AND state IN ('available', 'pending', 'blocked') RETURNING *
),
moved AS (
    INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, args, metadata, tags, attempt,
        max_attempts, errors, error_count, timeout_ms, created_at, run_at, attempted_at, finalized_at, batch_id, flow,
        ordering_key, key_limit, route, routing)
    SELECT id, 'cancelled', queue, kind, priority, args, metadata, tags, attempt, max_attempts,
        errors, error_count, timeout_ms, created_at, run_at, attempted_at, $2, batch_id, flow, ordering_key, key_limit,
        route, routing
    FROM done
),
flagged AS (
    UPDATE {schema}jobs SET cancel_requested = true
    WHERE id = ANY($1::bigint[]) AND state = 'running' AND NOT cancel_requested AND $3::boolean
    RETURNING id, queue
)
SELECT id, 'cancelled', flow & 27 /*FlowEnd*/, queue, ordering_key FROM done
UNION ALL
SELECT id, 'running', 0, queue, NULL FROM flagged;

-- name: JobDiscard
-- The unique (8) and keyed (16) bits go with the row, so that the pruner
-- and a retry find the job's unique key, and the engine frees it and
-- promotes the job's key in the same transaction (engine.Discard) from the
-- row returned.
WITH done AS (
    DELETE FROM {schema}jobs WHERE id = ANY($1::bigint[]) AND state = 'available' RETURNING *
)
INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, args, metadata, tags, attempt,
    max_attempts, errors, error_count, timeout_ms, created_at, run_at, attempted_at, finalized_at, flow, ordering_key,
    key_limit, route, routing)
SELECT id, 'discarded', queue, kind, priority, args, metadata, tags, attempt, max_attempts,
    errors, error_count, timeout_ms, created_at, run_at, attempted_at, $2, (flow & 8 /*FlowUnique*/) | (flow & 16 /*FlowKeyed*/), ordering_key, key_limit,
    route, routing
FROM done
RETURNING id, state, flow & 27 /*FlowEnd*/, queue, ordering_key;

-- name: JobRetry
-- A finished job returns to the hot table under its own ID, with one more
-- attempt allowed if it had used them all; a scheduled or retryable one
-- becomes claimable now (an available one already is, and keeps its place
-- in the claim order), so that every row returned but a refused one is a
-- job the retry changed. A keyed job returns to its key as blocked, and the caller promotes
-- the key in the same transaction (KeyLock, KeyPromote), so it waits
-- behind the key's active jobs when the key is full; its old ID puts it
-- first among the key's blocked jobs. Batch members and jobs with
-- dependants are not revived: their end was counted on their batch and
-- settled their dependants, which a second end would count again. The
-- last column reports such a job (the outer SELECT sees the row the
-- DELETE removed, as statements see their snapshot) with its flow. A
-- revived unique job keeps its unique bit (8); UniqueRetake runs next in
-- the same transaction to take its key again if it gave it up. A revived
-- keyed job carries FlowKeyed (16), which jobs finished before migration
-- 010 lack.
WITH revived AS (
    DELETE FROM {schema}finished_jobs WHERE id = ANY($1::bigint[]) AND flow & 3 /*FlowSettle*/ = 0 RETURNING *
),
inserted AS (
    INSERT INTO {schema}jobs (id, state, queue, kind, priority, args, metadata, tags, attempt, max_attempts,
        errors, error_count, timeout_ms, created_at, run_at, attempted_at, batch_id, flow, ordering_key, key_limit,
        route, routing)
    SELECT id, CASE WHEN ordering_key IS NULL THEN 'available' ELSE 'blocked' END,
        queue, kind, priority, args, metadata, tags, attempt, greatest(max_attempts, attempt + 1),
        errors, error_count, timeout_ms, created_at, $2, attempted_at, batch_id,
        flow | CASE WHEN ordering_key IS NULL THEN 0 ELSE 16 /*FlowKeyed*/ END, ordering_key, key_limit, route, routing
    FROM revived
    RETURNING id, queue, ordering_key
),
rescheduled AS (
    UPDATE {schema}jobs SET run_at = $2 WHERE id = ANY($1::bigint[]) AND state = 'available' AND run_at > $2 RETURNING id, queue
)
SELECT id, queue, ordering_key, 0 FROM inserted
UNION ALL
SELECT id, queue, NULL, 0 FROM rescheduled
UNION ALL
SELECT id, queue, NULL, flow FROM {schema}finished_jobs WHERE id = ANY($1::bigint[]) AND flow & 3 /*FlowSettle*/ <> 0;

-- name: JobDelete
-- Deletes the finished jobs of $1, with their unique keys as JobPrune
-- does, and returns their IDs. The engine has cancelled the waiting ones
-- of a bulk delete in the same transaction, so that they are finished here.
WITH deleted AS (
    DELETE FROM {schema}finished_jobs WHERE id = ANY($1::bigint[]) RETURNING id, flow
),
keys AS (
    DELETE FROM {schema}unique_keys WHERE job_id IN (SELECT id FROM deleted WHERE flow & 8 /*FlowUnique*/ <> 0)
)
SELECT id FROM deleted;

-- name: JobCountByState
SELECT CASE WHEN state = 'available' AND run_at > now() THEN CASE WHEN attempt = 0 THEN 'scheduled' ELSE 'retryable' END ELSE state END AS s, count(*)
FROM {schema}jobs WHERE $1 = '' OR queue = $1 GROUP BY s
UNION ALL
SELECT state, count(*) FROM {schema}finished_jobs WHERE $1 = '' OR queue = $1 GROUP BY state;

-- name: QueueStats
-- One pass over the hot table only; finished jobs are never counted here.
SELECT queue,
    count(*) FILTER (WHERE state = 'available' AND run_at <= $1),
    count(*) FILTER (WHERE state = 'available' AND run_at > $1 AND attempt = 0),
    count(*) FILTER (WHERE state = 'available' AND run_at > $1 AND attempt > 0),
    count(*) FILTER (WHERE state = 'running'),
    min(run_at) FILTER (WHERE state = 'available' AND run_at <= $1)
FROM {schema}jobs
GROUP BY queue
ORDER BY queue;

-- name: FinishedStats
-- Jobs finished in ($1, $2], per queue, with nearest-rank percentiles of the
-- pickup latency (ms) of the completed ones. The BRIN index on finalized_at
-- keeps this to the recent end of the table, as far as its ranges are
-- summarised (the minute sample summarises them: summarizeFinished).
WITH w AS (
    SELECT queue, state, extract(epoch FROM coalesce(attempted_at, run_at) - run_at) * 1000 AS lat
    FROM {schema}finished_jobs
    WHERE finalized_at > $1 AND finalized_at <= $2
),
r AS (
    SELECT queue, state, lat,
        row_number() OVER (PARTITION BY queue, state ORDER BY lat) AS rn,
        count(*) OVER (PARTITION BY queue, state) AS n
    FROM w
)
SELECT queue,
    count(*) FILTER (WHERE state = 'completed'),
    count(*) FILTER (WHERE state = 'cancelled'),
    count(*) FILTER (WHERE state = 'discarded'),
    coalesce(max(lat) FILTER (WHERE state = 'completed' AND rn = (n * 50 + 99) / 100), 0)::float8,
    coalesce(max(lat) FILTER (WHERE state = 'completed' AND rn = (n * 95 + 99) / 100), 0)::float8,
    coalesce(max(lat) FILTER (WHERE state = 'completed' AND rn = (n * 99 + 99) / 100), 0)::float8
FROM r
GROUP BY queue
ORDER BY queue;

-- name: FinishedLock
-- The lock a summary of finished_jobs' BRIN index takes, not waited for:
-- a VACUUM holding it summarises the index itself (summarizeFinished).
LOCK TABLE {schema}finished_jobs IN SHARE UPDATE EXCLUSIVE MODE NOWAIT;

-- name: FinishedSummarize
-- Summarises the block ranges of the BRIN index $1 (quoted) filled since
-- it was last summarised, after FinishedLock in the same transaction.
SELECT brin_summarize_new_values($1::regclass);

-- name: StatsRecord
-- The minute sample ending at $1 (migration 023): the jobs waiting and
-- running at $4 and those finished in ($2, $3], per queue and kind, per
-- queue and for all queues (the grouping sets; the empty set yields a row
-- even with no job), with nearest-rank percentiles (percentile_disc) of
-- the completed jobs' pickup latency and run time in ms. The hot table is
-- read once and grouped by queue and kind before anything else, as
-- QueueStats reads it, and finished jobs through their BRIN index, as
-- FinishedStats, its new ranges summarised just before (FinishedSummarize);
-- only the window's completed jobs are sorted for the percentiles. A
-- sample stored already is kept.
INSERT INTO {schema}stat_samples (resolution, at, queue, kind, pending, blocked, available, scheduled, retryable, running,
    completed, cancelled, discarded, pickup_p50, pickup_p95, pickup_p99, run_p50, run_p95, run_p99)
WITH g AS (
    SELECT queue, kind,
        count(*) FILTER (WHERE state = 'pending') AS pending, count(*) FILTER (WHERE state = 'blocked') AS blocked,
        count(*) FILTER (WHERE state = 'available' AND run_at <= $4) AS available,
        count(*) FILTER (WHERE state = 'available' AND run_at > $4 AND attempt = 0) AS scheduled,
        count(*) FILTER (WHERE state = 'available' AND run_at > $4 AND attempt > 0) AS retryable,
        count(*) FILTER (WHERE state = 'running') AS running,
        0::bigint AS completed, 0::bigint AS cancelled, 0::bigint AS discarded
    FROM {schema}jobs
    GROUP BY queue, kind
    UNION ALL
    SELECT queue, kind, 0, 0, 0, 0, 0, 0,
        count(*) FILTER (WHERE state = 'completed'), count(*) FILTER (WHERE state = 'cancelled'),
        count(*) FILTER (WHERE state = 'discarded')
    FROM {schema}finished_jobs
    WHERE finalized_at > $2 AND finalized_at <= $3
    GROUP BY queue, kind
),
counts AS (
    SELECT coalesce(queue, '') AS queue, coalesce(kind, '') AS kind,
        coalesce(sum(pending), 0)::bigint AS pending, coalesce(sum(blocked), 0)::bigint AS blocked,
        coalesce(sum(available), 0)::bigint AS available, coalesce(sum(scheduled), 0)::bigint AS scheduled,
        coalesce(sum(retryable), 0)::bigint AS retryable, coalesce(sum(running), 0)::bigint AS running,
        coalesce(sum(completed), 0)::bigint AS completed, coalesce(sum(cancelled), 0)::bigint AS cancelled,
        coalesce(sum(discarded), 0)::bigint AS discarded
    FROM g
    GROUP BY GROUPING SETS ((queue, kind), (queue), ())
),
lat AS (
    SELECT coalesce(queue, '') AS queue, coalesce(kind, '') AS kind,
        percentile_disc(0.5) WITHIN GROUP (ORDER BY pickup) AS pickup_p50,
        percentile_disc(0.95) WITHIN GROUP (ORDER BY pickup) AS pickup_p95,
        percentile_disc(0.99) WITHIN GROUP (ORDER BY pickup) AS pickup_p99,
        percentile_disc(0.5) WITHIN GROUP (ORDER BY run) AS run_p50,
        percentile_disc(0.95) WITHIN GROUP (ORDER BY run) AS run_p95,
        percentile_disc(0.99) WITHIN GROUP (ORDER BY run) AS run_p99
    FROM (
        SELECT queue, kind, extract(epoch FROM coalesce(attempted_at, run_at) - run_at)::float8 * 1000 AS pickup,
            extract(epoch FROM finalized_at - coalesce(attempted_at, finalized_at))::float8 * 1000 AS run
        FROM {schema}finished_jobs
        WHERE state = 'completed' AND finalized_at > $2 AND finalized_at <= $3
    ) c
    GROUP BY GROUPING SETS ((queue, kind), (queue), ())
)
SELECT 60, $1, c.queue, c.kind, c.pending, c.blocked, c.available, c.scheduled, c.retryable, c.running,
    c.completed, c.cancelled, c.discarded,
    coalesce(l.pickup_p50, 0), coalesce(l.pickup_p95, 0), coalesce(l.pickup_p99, 0),
    coalesce(l.run_p50, 0), coalesce(l.run_p95, 0), coalesce(l.run_p99, 0)
FROM counts c LEFT JOIN lat l ON l.queue = c.queue AND l.kind = c.kind
ON CONFLICT DO NOTHING;

-- name: TopicLagRecord
-- The minute sample ending at $1 of each subscription's lag: $2-$6 the
-- topics, subscriptions, lags, ages of the oldest pending message (ms)
-- and dropped counts. A sample stored already is kept.
INSERT INTO {schema}topic_lag_samples (resolution, at, topic, subscription, lag, oldest_ms, dropped)
SELECT 60, $1, topic, subscription, lag, oldest_ms, dropped
FROM unnest($2::text[], $3::text[], $4::bigint[], $5::float8[], $6::bigint[]) AS l(topic, subscription, lag, oldest_ms, dropped)
ON CONFLICT DO NOTHING;

-- fragment: stat_bucket
-- The columns of stat_samples merged over a bucket, for a statement that
-- groups them: gauges averaged over the time their samples cover, counts
-- summed, percentiles the largest.
round(sum(pending * resolution)::float8 / sum(resolution))::bigint,
round(sum(blocked * resolution)::float8 / sum(resolution))::bigint,
round(sum(available * resolution)::float8 / sum(resolution))::bigint,
round(sum(scheduled * resolution)::float8 / sum(resolution))::bigint,
round(sum(retryable * resolution)::float8 / sum(resolution))::bigint,
round(sum(running * resolution)::float8 / sum(resolution))::bigint,
sum(completed)::bigint, sum(cancelled)::bigint, sum(discarded)::bigint,
max(pickup_p50), max(pickup_p95), max(pickup_p99), max(run_p50), max(run_p95), max(run_p99)

-- name: StatsRollup
-- The minute samples at or before $1 (an hour's end) of both tables become
-- hourly ones (stat_bucket; lag averaged, ages and dropped counts the
-- largest), and hourly samples before $2 go. Returns how many samples
-- were deleted.
WITH moved AS (
    DELETE FROM {schema}stat_samples WHERE resolution = 60 AND at <= $1 RETURNING *
),
hourly AS (
    INSERT INTO {schema}stat_samples (resolution, at, queue, kind, pending, blocked, available, scheduled, retryable, running,
        completed, cancelled, discarded, pickup_p50, pickup_p95, pickup_p99, run_p50, run_p95, run_p99)
    SELECT 3600, to_timestamp(ceil(extract(epoch FROM at) / 3600) * 3600) AS hour, queue, kind, {stat_bucket}
    FROM moved
    GROUP BY hour, queue, kind
    ON CONFLICT DO NOTHING
),
lag_moved AS (
    DELETE FROM {schema}topic_lag_samples WHERE resolution = 60 AND at <= $1 RETURNING *
),
lag_hourly AS (
    INSERT INTO {schema}topic_lag_samples (resolution, at, topic, subscription, lag, oldest_ms, dropped)
    SELECT 3600, to_timestamp(ceil(extract(epoch FROM at) / 3600) * 3600) AS hour, topic, subscription,
        round(avg(lag))::bigint, max(oldest_ms), max(dropped)
    FROM lag_moved
    GROUP BY hour, topic, subscription
    ON CONFLICT DO NOTHING
),
old AS (
    DELETE FROM {schema}stat_samples WHERE resolution = 3600 AND at < $2 RETURNING 1
),
lag_old AS (
    DELETE FROM {schema}topic_lag_samples WHERE resolution = 3600 AND at < $2 RETURNING 1
)
SELECT (SELECT count(*) FROM moved) + (SELECT count(*) FROM lag_moved) + (SELECT count(*) FROM old) + (SELECT count(*) FROM lag_old);

-- name: StatsHistory
-- The samples in ($1, $2] of the series $4 (queue) and $5 (kind) select
-- ('*': each one, '' all together), merged into buckets of $3 seconds
-- ending on its multiples; samples longer than a bucket are left out.
SELECT to_timestamp(ceil(extract(epoch FROM at) / $3::float8) * $3::float8) AS bucket, queue, kind, {stat_bucket}
FROM {schema}stat_samples
WHERE at > $1 AND at <= $2 AND resolution <= $3::float8
    AND (queue = $4::text OR ($4::text = '*' AND queue <> '')) AND (kind = $5::text OR ($5::text = '*' AND kind <> ''))
GROUP BY bucket, queue, kind
ORDER BY bucket, queue, kind;

-- name: TopicLagHistory
-- StatsHistory for the subscriptions of topic $4 ('' every topic): lag
-- averaged, ages and dropped counts the largest.
SELECT to_timestamp(ceil(extract(epoch FROM at) / $3::float8) * $3::float8) AS bucket, topic, subscription,
    round(sum(lag * resolution)::float8 / sum(resolution))::bigint, max(oldest_ms), max(dropped)::bigint
FROM {schema}topic_lag_samples
WHERE at > $1 AND at <= $2 AND resolution <= $3::float8 AND ($4::text = '' OR topic = $4::text)
GROUP BY bucket, topic, subscription
ORDER BY bucket, topic, subscription;

-- name: LeaseOwners
-- From jobs_running_idx, whose predicate this repeats (migration 027).
SELECT lease_owner, count(*), max(lease_expires_at)
FROM {schema}jobs
WHERE state = 'running' AND lease_owner IS NOT NULL
GROUP BY lease_owner
ORDER BY lease_owner;

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

-- Workflows and batches (flow.go). None of these runs for plain jobs.

-- name: JobInsertFlow
-- JobInsertMany with the flow columns: pending jobs wait for waiting_on
-- parents (or their batch, for a callback). A keyed job that does not wait
-- is gated like JobInsertKeyed (KeyLock runs before it in the transaction), and
-- also waits as blocked behind a pending job of its key earlier in the
-- call; a keyed pending job holds its place in its key (KeyPromote). A
-- keyed job carries FlowKeyed (16).
WITH p AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::jsonb[], $5::text[], $6::smallint[], $7::integer[],
            $8::timestamptz[], $9::bigint[], $10::text[], $11::integer[], $12::smallint[], $13::bigint[], $14::text[],
            $15::integer[], $16::text[], $17::jsonb[])
        WITH ORDINALITY AS p(queue, kind, args, metadata, tags, priority, max_attempts, run_at, timeout_ms,
            state, waiting_on, flow, batch_id, ordering_key, key_limit, route, routing, ord)
),
gated AS (
    SELECT p.*,
        CASE WHEN p.state = 'pending' OR p.ordering_key IS NULL THEN p.state
             -- order: a key with a rate starts its jobs through KeyPromote.
             WHEN EXISTS (SELECT 1 FROM {schema}key_rates r WHERE r.queue = p.queue AND r.ordering_key = p.ordering_key)
             THEN 'blocked'
             WHEN NOT EXISTS (SELECT 1 FROM {schema}jobs j
                              WHERE j.queue = p.queue AND j.ordering_key = p.ordering_key AND j.state IN ('blocked', 'pending'))
              AND count(*) FILTER (WHERE p.state = 'pending')
                  OVER (PARTITION BY p.queue, p.ordering_key ORDER BY p.ord) = 0
              AND (SELECT count(*) FROM {schema}jobs j
                   WHERE j.queue = p.queue AND j.ordering_key = p.ordering_key AND j.state IN ('available', 'running'))
                  + row_number() OVER (PARTITION BY p.queue, p.ordering_key ORDER BY p.ord) <= p.key_limit
             THEN 'available'
             ELSE 'blocked' END AS gated_state
    FROM p
)
INSERT INTO {schema}jobs (queue, kind, args, metadata, tags, priority, max_attempts, run_at, timeout_ms,
    state, waiting_on, flow, batch_id, ordering_key, key_limit, route, routing)
SELECT queue, kind, args, metadata, string_to_array(tags, ','), priority, max_attempts, coalesce(run_at, now()), timeout_ms,
    gated_state, waiting_on, flow | CASE WHEN ordering_key IS NULL THEN 0 ELSE 16 /*FlowKeyed*/ END, batch_id, ordering_key, key_limit,
    route, routing
FROM gated
ORDER BY ord
RETURNING id;

-- name: JobFlowMarkParents
-- Marks stored parents that have not ended as having dependants, and locks
-- them until the inserting transaction commits: a parent finishing
-- meanwhile waits, then sees the mark (JobFinish's fence) and settles the
-- new dependants. Returns the parents that have not ended.
UPDATE {schema}jobs SET flow = flow | 2 /*FlowHasDependants*/ WHERE id = ANY($1::bigint[]) RETURNING id;

-- name: JobFlowEndedParents
SELECT id, state FROM {schema}finished_jobs WHERE id = ANY($1::bigint[]);

-- name: JobFlowInsertDeps
INSERT INTO {schema}job_deps (parent_id, child_id)
SELECT * FROM unnest($1::bigint[], $2::bigint[])
ON CONFLICT DO NOTHING;

-- name: NoJIT
-- Sent first, in the same round trip, with a statement whose cost estimate
-- crosses jit_above_cost whatever the real size, where JIT would compile
-- the statement anew on every execution. The recursive CTE of
-- JobFlowSettle cannot know a DAG's depth: measured 0.4-1.2 s per settle,
-- against 10-30 ms without it, for 1,000 jobs that ended. JobRouteAbsent's
-- check of a worker's running jobs is priced by the hot table's pages.
-- set_config rather than SET LOCAL, as CustomPlans says.
SELECT set_config('jit', 'off', true);

-- name: CustomPlans
-- Sent first, in the same round trip (and so the same transaction), with
-- the statements that probe jobs by ordering key (JobInsertKeyed and
-- KeyPromote after it): they are planned for their parameters on each
-- execution until the transaction ends. Their generic plan is priced on
-- the hot table as it was when pgx prepared them, often empty at start-up,
-- and PostgreSQL keeps it from the sixth execution until the table's
-- statistics change: measured 183 s to insert 1,000 keyed jobs after the
-- table grew to 50,000 rows, against 0.10-0.15 s through jobs_key_idx.
-- set_config rather than SET LOCAL: outside a transaction block (a batch
-- on the pool runs in the implicit one up to its Sync) SET LOCAL works but
-- warns, in the server log, at every call.
SELECT set_config('plan_cache_mode', 'force_custom_plan', true);

-- name: JobFlowLock
-- Sent with JobFlowSettle, before it: locks the dependants and batch rows
-- that settling $1 will update, in ID order. Transactions of several
-- processes settling overlapping dependants then queue instead of
-- deadlocking, which the unordered updates of JobFlowSettle alone would.
-- The = ANY(ARRAY(…)) forms make every table a lookup by key, whatever the
-- planner guesses about the sizes of the sets.
WITH children AS (
    SELECT j.id FROM {schema}jobs j
    WHERE j.id = ANY(ARRAY(SELECT e.child_id FROM {schema}job_deps e WHERE e.parent_id = ANY($1::bigint[])))
    ORDER BY j.id
    FOR UPDATE
),
counted AS (
    SELECT b.id FROM {schema}batches b
    WHERE b.id = ANY(ARRAY(SELECT f.batch_id FROM {schema}finished_jobs f WHERE f.id = ANY($1::bigint[]) AND f.flow & 1 /*FlowBatchMember*/ = 1 /*FlowBatchMember*/))
    ORDER BY b.id
    FOR UPDATE
)
SELECT (SELECT count(*) FROM children), (SELECT count(*) FROM counted);

-- name: JobFlowSettle
-- $1 lists jobs that ended in this transaction (moved to finished_jobs).
-- The first column it returns lists the queues of the jobs it made
-- available, for the caller to wake once the transaction has committed
-- (waker.go). In one statement:
--  * doomed: dependants still pending that are cancelled because a parent
--    ended without completing, and their own such dependants, recursively
--    (jobs asking to be released in that case are not cancelled);
--  * released: every other pending dependant of a job that ended has one
--    parent fewer to wait for, and becomes available at zero;
--  * counted: batch members that ended (cancelled dependants included) are
--    counted on their batch rows; the update that counts a batch's last
--    member releases its callback, exactly once, since counters only grow;
--  * the queues that got available jobs are returned, to wake;
--  * keyed dependants released (and a keyed callback) wait as blocked
--    instead: the caller promotes the keys returned, with those of keyed
--    dependants cancelled here (Ended in internal/engine/finish.go).
-- Concurrent settles of one dependant serialise on its row lock and re-read
-- it, so waiting_on is decremented once per parent.
--
-- Edges and dependants are always reached from the jobs that ended, one
-- parent at a time, through LATERAL subqueries that OFFSET 0 keeps the
-- planner from flattening: each is a lookup by key. Left to itself, with
-- the hot table's sizes misjudged, the planner scanned every pending job
-- and looped over the ended ones for each (seconds per settle at 10,000
-- workflows).
WITH RECURSIVE fin AS (
    SELECT id, state, batch_id, flow FROM {schema}finished_jobs WHERE id = ANY($1::bigint[])
),
doomed(id, cause, cause_state) AS (
    SELECT c.id, f.id, f.state
    FROM fin f
    CROSS JOIN LATERAL (
        SELECT j.id FROM {schema}job_deps e JOIN {schema}jobs j ON j.id = e.child_id
        WHERE e.parent_id = f.id AND j.state = 'pending' AND j.flow & 4 /*FlowReleaseOnParentFailure*/ = 0
        OFFSET 0
    ) c
    WHERE f.state <> 'completed'
    UNION
    SELECT c.id, d.id, 'cancelled'
    FROM doomed d
    CROSS JOIN LATERAL (
        SELECT j.id FROM {schema}job_deps e JOIN {schema}jobs j ON j.id = e.child_id
        WHERE e.parent_id = d.id AND j.state = 'pending' AND j.flow & 4 /*FlowReleaseOnParentFailure*/ = 0
        OFFSET 0
    ) c
),
cancelled AS (
    DELETE FROM {schema}jobs j
    USING (SELECT DISTINCT ON (id) id, cause, cause_state FROM doomed ORDER BY id, cause) d
    WHERE j.id = d.id AND j.state = 'pending'
    RETURNING j.*, d.cause, d.cause_state
),
cancelled_moved AS (
    INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, args, metadata, tags, attempt,
        max_attempts, errors, error_count, timeout_ms, created_at, run_at, attempted_at, finalized_at, batch_id, flow,
        ordering_key, key_limit, route, routing)
    SELECT id, 'cancelled', queue, kind, priority, args, metadata, tags, attempt, max_attempts,
        jsonb_path_query_array(coalesce(errors, '[]'::jsonb) || jsonb_build_array(jsonb_build_object('attempt', attempt, 'at', now(),
            'error', format('dependency %s ended as %s', cause, cause_state))), '$[last - {errors_kept} + 1 to last]'),
        error_count + 1,
        timeout_ms, created_at, run_at, attempted_at, now(), batch_id, flow, ordering_key, key_limit, route, routing
    FROM cancelled
),
ended AS (
    SELECT id, state, batch_id, flow FROM fin
    UNION ALL
    SELECT id, 'cancelled', batch_id, flow FROM cancelled
),
released AS (
    UPDATE {schema}jobs j
    SET waiting_on = j.waiting_on - m.n,
        state = CASE WHEN j.waiting_on > m.n THEN 'pending'
                     WHEN j.ordering_key IS NULL THEN 'available'
                     ELSE 'blocked' END,
        -- A job released now is due now (or when it was scheduled, if
        -- later): it queues behind what was already waiting, and after
        -- the position a producer's positional claims start past. A keyed
        -- one keeps its place in its key's order, which follows run_at. The
        -- clock, not now(), which is when this transaction began: a
        -- finish that began earlier but commits later would otherwise
        -- release jobs behind rows other finishes released and producers
        -- already claimed.
        run_at = CASE WHEN j.waiting_on > m.n OR j.ordering_key IS NOT NULL THEN j.run_at
                      ELSE greatest(j.run_at, clock_timestamp()) END
    FROM (
        SELECT e.child_id, count(*) AS n
        FROM ended p
        CROSS JOIN LATERAL (SELECT child_id FROM {schema}job_deps WHERE parent_id = p.id OFFSET 0) e
        GROUP BY e.child_id
    ) m
    WHERE j.id = m.child_id AND j.state = 'pending'
      AND NOT EXISTS (SELECT 1 FROM doomed WHERE doomed.id = j.id)
    RETURNING j.queue, j.state, j.ordering_key
),
counted AS (
    UPDATE {schema}batches b
    SET completed = b.completed + c.completed,
        cancelled = b.cancelled + c.cancelled,
        discarded = b.discarded + c.discarded,
        finished_at = CASE WHEN b.finished_at IS NULL AND b.completed + b.cancelled + b.discarded + c.n >= b.total
            THEN now() ELSE b.finished_at END
    FROM (
        SELECT batch_id,
            count(*) FILTER (WHERE state = 'completed') AS completed,
            count(*) FILTER (WHERE state = 'cancelled') AS cancelled,
            count(*) FILTER (WHERE state = 'discarded') AS discarded,
            count(*) AS n
        FROM ended WHERE flow & 1 /*FlowBatchMember*/ <> 0
        GROUP BY batch_id
    ) c
    WHERE b.id = c.batch_id
    RETURNING b.callback_job_id,
        b.completed + b.cancelled + b.discarded >= b.total AND b.completed + b.cancelled + b.discarded - c.n < b.total AS just_finished
),
callback AS (
    UPDATE {schema}jobs j
    SET state = CASE WHEN j.ordering_key IS NULL THEN 'available' ELSE 'blocked' END, waiting_on = 0,
        run_at = CASE WHEN j.ordering_key IS NULL THEN greatest(j.run_at, clock_timestamp()) ELSE j.run_at END -- as a released dependant
    FROM counted c
    WHERE c.just_finished AND j.id = c.callback_job_id AND j.state = 'pending'
    RETURNING j.queue, j.state, j.ordering_key
),
keyed AS (
    SELECT DISTINCT queue, ordering_key
    FROM (
        SELECT queue, ordering_key FROM released WHERE state = 'blocked'
        UNION ALL
        SELECT queue, ordering_key FROM callback WHERE state = 'blocked'
        UNION ALL
        SELECT queue, ordering_key FROM cancelled WHERE ordering_key IS NOT NULL
    ) k
)
SELECT (SELECT coalesce(array_agg(queue), '{}')
        FROM (
            SELECT queue FROM released WHERE state = 'available'
            UNION
            SELECT queue FROM callback WHERE state = 'available'
        ) woken),
    (SELECT array_agg(queue ORDER BY queue, ordering_key) FROM keyed),
    (SELECT array_agg(ordering_key ORDER BY queue, ordering_key) FROM keyed);

-- name: BatchCreate
INSERT INTO {schema}batches (total) VALUES ($1) RETURNING id;

-- name: BatchSetCallback
UPDATE {schema}batches SET callback_job_id = $2 WHERE id = $1;

-- name: BatchGet
-- The counts of running and retrying members match jobs_batch_idx's
-- predicate, so they read that small index only.
SELECT b.id, b.total, b.completed, b.cancelled, b.discarded,
    (SELECT count(*) FROM {schema}jobs j WHERE j.batch_id = b.id AND j.flow & 1 /*FlowBatchMember*/ = 1 /*FlowBatchMember*/ AND j.state = 'running'),
    (SELECT count(*) FROM {schema}jobs j WHERE j.batch_id = b.id AND j.flow & 1 /*FlowBatchMember*/ = 1 /*FlowBatchMember*/ AND j.state = 'available' AND j.attempt > 0),
    coalesce(b.callback_job_id, 0), b.created_at, b.finished_at
FROM {schema}batches b WHERE b.id = $1;

-- name: BatchList
-- $1 the ID to list before (the driver passes the largest ID for the
-- newest), $2 the limit: a keyset page of the primary key, each batch's
-- figures as BatchGet reads them.
SELECT b.id, b.total, b.completed, b.cancelled, b.discarded,
    (SELECT count(*) FROM {schema}jobs j WHERE j.batch_id = b.id AND j.flow & 1 /*FlowBatchMember*/ = 1 /*FlowBatchMember*/ AND j.state = 'running'),
    (SELECT count(*) FROM {schema}jobs j WHERE j.batch_id = b.id AND j.flow & 1 /*FlowBatchMember*/ = 1 /*FlowBatchMember*/ AND j.state = 'available' AND j.attempt > 0),
    coalesce(b.callback_job_id, 0), b.created_at, b.finished_at
FROM {schema}batches b WHERE b.id < $1
ORDER BY b.id DESC
LIMIT $2;

-- name: BatchResults
-- Members only: the callback carries the batch ID too.
SELECT id, state, kind, result FROM {schema}finished_jobs
WHERE batch_id = $1 AND id > $2 AND flow & 1 /*FlowBatchMember*/ = 1 /*FlowBatchMember*/
ORDER BY id
LIMIT $3;

-- name: JobResults
SELECT id, state, kind, result FROM {schema}finished_jobs WHERE id = ANY($1::bigint[])
UNION ALL
SELECT id, state, kind, NULL FROM {schema}jobs WHERE id = ANY($1::bigint[])
ORDER BY id;

-- name: JobParentResults
SELECT f.id, f.state, f.kind, f.result
FROM {schema}job_deps e JOIN {schema}finished_jobs f ON f.id = e.parent_id
WHERE e.child_id = $1
UNION ALL
SELECT j.id, j.state, j.kind, NULL
FROM {schema}job_deps e JOIN {schema}jobs j ON j.id = e.parent_id
WHERE e.child_id = $1
ORDER BY 1;

-- name: JobDeps
-- The edges of $1 as parents (the primary key) and as children
-- (job_deps_child_idx).
SELECT parent_id, child_id FROM {schema}job_deps WHERE parent_id = ANY($1::bigint[])
UNION
SELECT parent_id, child_id FROM {schema}job_deps WHERE child_id = ANY($1::bigint[])
ORDER BY 1, 2;

-- name: JobsParentResults
-- The parents of many jobs at once, for the claims of remote workers.
SELECT e.child_id, f.id, f.state, f.kind, f.result
FROM {schema}job_deps e JOIN {schema}finished_jobs f ON f.id = e.parent_id
WHERE e.child_id = ANY($1::bigint[])
UNION ALL
SELECT e.child_id, j.id, j.state, j.kind, NULL
FROM {schema}job_deps e JOIN {schema}jobs j ON j.id = e.parent_id
WHERE e.child_id = ANY($1::bigint[])
ORDER BY 1, 2;

-- Periodic jobs (periodic.go).

-- name: PeriodicTicks
SELECT name, tick FROM {schema}periodic_ticks WHERE name = ANY($1::text[]);

-- name: PeriodicTicksRecord
-- Keeps the later tick: a leader that lost its leadership while inserting
-- cannot move a periodic job's last tick back.
INSERT INTO {schema}periodic_ticks AS p (name, tick)
SELECT * FROM unnest($1::text[], $2::timestamptz[])
ON CONFLICT (name) DO UPDATE SET tick = greatest(p.tick, excluded.tick);

-- Stored periodic definitions (migration 014). Every statement that
-- returns definitions returns these columns, the last tick of the name
-- last: name, schedule, kind, args, queue, priority, max_attempts, tags,
-- source, paused, created_at, updated_at, tick.

-- name: PeriodicCreate
-- Nothing when the name is taken, by either source.
WITH p AS (
    INSERT INTO {schema}periodic_jobs AS p (name, schedule, kind, args, queue, priority, max_attempts, tags, source,
        created_at, updated_at)
    VALUES ($1, $2, $3, $4::text::jsonb, $5, $6, $7, string_to_array($8, ','), 'api', $9, $9)
    ON CONFLICT (name) DO NOTHING
    RETURNING p.*
)
SELECT p.name, p.schedule, p.kind, p.args, p.queue, p.priority, p.max_attempts, p.tags, p.source, p.paused,
    p.created_at, p.updated_at, t.tick
FROM p LEFT JOIN {schema}periodic_ticks t ON t.name = p.name;

-- name: PeriodicUpdate
-- Only a definition created through the API: a Go-configured one changes
-- in its Go config.
WITH p AS (
    UPDATE {schema}periodic_jobs AS p
    SET schedule = $2, kind = $3, args = $4::text::jsonb, queue = $5, priority = $6, max_attempts = $7,
        tags = string_to_array($8, ','), updated_at = $9
    WHERE p.name = $1 AND p.source = 'api'
    RETURNING p.*
)
SELECT p.name, p.schedule, p.kind, p.args, p.queue, p.priority, p.max_attempts, p.tags, p.source, p.paused,
    p.created_at, p.updated_at, t.tick
FROM p LEFT JOIN {schema}periodic_ticks t ON t.name = p.name;

-- name: PeriodicRegister
-- The leader's Go-configured entries: each replaces the row of its name
-- (a stored definition of that name included) but keeps its paused flag.
-- Tags travel comma-joined (tags hold no commas). A row that already says
-- the same is left alone, so that a leader change writes nothing.
INSERT INTO {schema}periodic_jobs AS p (name, schedule, kind, args, queue, priority, max_attempts, tags, source,
    created_at, updated_at)
SELECT name, schedule, kind, args::jsonb, queue, priority, max_attempts, string_to_array(tags, ','), 'config', $9, $9
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::smallint[], $7::integer[], $8::text[])
    AS d(name, schedule, kind, args, queue, priority, max_attempts, tags)
ON CONFLICT (name) DO UPDATE SET schedule = excluded.schedule, kind = excluded.kind, args = excluded.args,
    queue = excluded.queue, priority = excluded.priority, max_attempts = excluded.max_attempts, tags = excluded.tags,
    source = 'config', updated_at = excluded.updated_at
WHERE (p.schedule, p.kind, p.args, p.queue, p.priority, p.max_attempts, p.tags, p.source)
    IS DISTINCT FROM (excluded.schedule, excluded.kind, excluded.args, excluded.queue, excluded.priority,
        excluded.max_attempts, excluded.tags, 'config');

-- name: PeriodicList
SELECT p.name, p.schedule, p.kind, p.args, p.queue, p.priority, p.max_attempts, p.tags, p.source, p.paused,
    p.created_at, p.updated_at, t.tick
FROM {schema}periodic_jobs p LEFT JOIN {schema}periodic_ticks t ON t.name = p.name
ORDER BY p.name;

-- name: PeriodicSetPaused
WITH p AS (
    UPDATE {schema}periodic_jobs AS p SET paused = $2, updated_at = $3
    WHERE p.name = $1
    RETURNING p.*
)
SELECT p.name, p.schedule, p.kind, p.args, p.queue, p.priority, p.max_attempts, p.tags, p.source, p.paused,
    p.created_at, p.updated_at, t.tick
FROM p LEFT JOIN {schema}periodic_ticks t ON t.name = p.name;

-- name: PeriodicDelete
DELETE FROM {schema}periodic_jobs WHERE name = $1;

-- name: JobInserted
-- The job that the insert statements before it in the same round trip
-- stored (JobInsert: one job, plain or keyed), as they left it: its state
-- (blocked behind its key, or available), created_at and run_at are the
-- store's. Both inserts draw the job's ID from the jobs' sequence ($1 is
-- the quoted table name), so currval, which is per session, names it; a
-- unique job skipped as a duplicate drew an ID but stored no row, and
-- this returns none. currval is volatile, so compared with id directly it
-- would be evaluated per row and the planner would scan the whole hot
-- table; the subquery reads it once (an init plan) and the primary key
-- finds the row. Columns as JobGet's.
SELECT id, CASE WHEN state = 'available' AND run_at > now() THEN CASE WHEN attempt = 0 THEN 'scheduled' ELSE 'retryable' END ELSE state END,
    queue, kind, priority, args, metadata, tags, attempt, max_attempts, errors, error_count, timeout_ms, created_at,
    run_at, attempted_at, NULL::timestamptz, lease_owner, lease_expires_at, cancel_requested, batch_id, ordering_key, routing
FROM {schema}jobs WHERE id = (SELECT currval(pg_get_serial_sequence($1, 'id')));
-- Topics (docs/design/topics.md, migrations 013 and 020). Positions are
-- (xid, id) in commit order: a publish stores xid = -(its transaction id),
-- unreadable, and a sequencing pass (TopicSequence) gives the messages
-- committed since the last pass xid = v, a value above every earlier
-- pass's, in one transaction. What becomes readable later therefore always
-- sorts after what is readable now, and a cursor never passes a message
-- still in flight; readers need no horizon.

-- name: TopicCreate
-- $1 name, $2 lanes, $3 retention ms. Returns the stored topic, new or not,
-- and whether this statement stored it.
WITH ins AS (
    INSERT INTO {schema}topics (name, lanes, retention_ms) VALUES ($1, $2, $3)
    ON CONFLICT (name) DO NOTHING RETURNING name, lanes, retention_ms, created_at)
SELECT name, lanes, retention_ms, created_at, true FROM ins
UNION ALL
SELECT name, lanes, retention_ms, created_at, false FROM {schema}topics WHERE name = $1
LIMIT 1;

-- name: TopicList
SELECT t.name, t.lanes, t.retention_ms, t.created_at,
    ARRAY(SELECT s.name FROM {schema}topic_subscriptions AS s WHERE s.topic = t.name ORDER BY s.name)
FROM {schema}topics AS t ORDER BY t.name;

-- name: TopicPublish
-- One array per column, of messages of any topics. ids come from the
-- sequence in array order (WITH ORDINALITY keeps it). xid is minus the
-- transaction's id: not readable until a pass sequences it (TopicSequence),
-- which finds it by that id. The xid is taken (x) before any id: a
-- generation is final once every publisher with an xid below the xmax read
-- after the sequence left it has ended (TopicSeal), which holds only if no
-- transaction takes an id of it before having an xid.
WITH x AS MATERIALIZED (SELECT pg_current_xact_id()::text::bigint AS xid)
INSERT INTO {schema}topic_messages (xid, topic, lane, key, payload, metadata)
SELECT -x.xid, u.topic, u.lane, u.key, u.payload, u.metadata
FROM x, unnest($1::text[], $2::int[], $3::text[], $4::bytea[], $5::jsonb[]) WITH ORDINALITY AS u(topic, lane, key, payload, metadata, ord)
ORDER BY u.ord
RETURNING id;

-- name: SubscriptionCreate
-- $1 topic, $2 name, $3 max attempts, $4 start (0 latest, 1 earliest).
-- Stores the subscription and one lane row per lane. Latest starts at the
-- snapshot's xmax: every pass that commits later was taken later and gives
-- a position at or above it, so every message committed after the
-- subscription is delivered (a few committed just before may be among
-- them, never fewer).
-- Returns the number of lanes made: 0 when it existed or the topic does not.
WITH sub AS (
    INSERT INTO {schema}topic_subscriptions (topic, name, max_attempts)
    SELECT $1, $2, $3 FROM {schema}topics WHERE name = $1
    ON CONFLICT (topic, name) DO NOTHING RETURNING topic, name),
lanes AS (
    INSERT INTO {schema}topic_lanes (topic, subscription, lane, cursor_xid, cursor_id)
    SELECT sub.topic, sub.name, g.lane,
        CASE WHEN $4 = 1 THEN 0 ELSE pg_snapshot_xmax(pg_current_snapshot())::text::bigint END, 0
    FROM sub, {schema}topics AS t, generate_series(0, t.lanes - 1) AS g(lane)
    WHERE t.name = sub.topic
    RETURNING 1)
SELECT count(*) FROM lanes;

-- name: TopicExists
SELECT 1 FROM {schema}topics WHERE name = $1;

-- name: TopicDelete
-- $1 name. Its subscriptions go with it, and their lanes with them (ON
-- DELETE CASCADE); its messages, in every generation, in the same
-- statement. Returns a row when the topic existed.
WITH messages AS (DELETE FROM {schema}topic_messages WHERE topic = $1)
DELETE FROM {schema}topics WHERE name = $1 RETURNING 1;

-- name: SubscriptionDelete
-- Its lanes go with it (ON DELETE CASCADE).
DELETE FROM {schema}topic_subscriptions WHERE topic = $1 AND name = $2;

-- name: TopicLease
-- $1 topics, $2 subscriptions, $3 their batch limits (parallel arrays), $4
-- owner, $5 token, $6 lease ms, $7 max lanes, $8 waiting ms. Free lanes (no
-- owner or an expired lease) behind the head of their topic's lane, by
-- (topic, lane), the group with the least recently leased lane first, and
-- by cursor within a group: a lease takes whole groups, whose lanes at one
-- cursor are read once for all, and consumer processes take different
-- groups rather than each reading the same messages for a few
-- subscriptions (SQLite's TopicLeaseCandidates has the same order). SKIP
-- LOCKED lets concurrent consumers lease different lanes, and a lane
-- leased meanwhile fails the recheck of l. The head of a (topic, lane),
-- its last sequenced message, is one backward index probe however many
-- subscriptions share it, and the lanes meet the heads in a hash
-- join: probing for a message past each lane's cursor took one index
-- probe per lane (4,000 for 20 topics of 50 subscriptions and 4 lanes) and
-- was most of a lease's time. The lanes come from the named subscriptions,
-- not from generate_series over each topic's lane count, whose estimate of
-- 1,000 rows per topic once priced the plan high enough for JIT
-- compilation, a second and a half per lease.
--
-- Fair share: of each subscription another consumer contests (it holds a
-- lane behind its head, or waits for one), the owner takes at most
-- ceil(lanes / active) less the lanes it holds, active counting the
-- distinct live holders and waiters of the subscription's lanes and the
-- owner itself (fair, over the subscription's lanes, for contested ones
-- only: alone, a consumer's share is every lane, which never binds). The
-- lanes the owner holds play no part but in that count, and are left out
-- of c. An
-- owner left short of its share while others hold lanes with messages
-- ($8 > 0) marks one of them as waited for (waiting): the next leases count
-- it, and that lane is not kept past its ack. SKIP LOCKED: a lane its
-- holder is acking is not waited for. shared gives each lane of a
-- contested subscription its place among the subscription's free lanes
-- and their count, so that one pass finds both the lanes to take and the
-- subscriptions short of their share (room above their free lanes): a
-- count of the lanes taken per subscription, made for every lane another
-- consumer held, was a correlated subplan inside a nested loop, cubic in
-- the lanes (30 s a lease for 20 topics of 50 subscriptions and 4 lanes
-- shared by four consumer processes; their snapshots, held that long, kept
-- vacuum from topic_lanes, which every statement of the consumers then
-- read bloated). f probes the ranked lanes in lease order and stops at $7
-- locked, instead of probing every one before sorting them. Each lane
-- leased counts a delivery (attempt); a lane delivered before (attempt > 0: its lease expired, or
-- it delivers its suspect region one message at a time) keeps its batch,
-- a new batch is bounded by the lane's head and the subscription's limit
-- (docs/design/topics.md, "Consumers").
WITH s AS MATERIALIZED (
    SELECT * FROM unnest($1::text[], $2::text[], $3::int[]) AS s(topic, subscription, lim)),
c AS MATERIALIZED (
    SELECT c.topic, c.subscription, c.lane, c.cursor_xid, c.cursor_id, c.lease_owner, c.lease_expires_at,
        c.lease_owner IS NULL OR c.lease_expires_at < now() AS free,
        CASE WHEN c.waiting_until > now() THEN c.waiting_owner END AS waiter, s.lim
    FROM {schema}topic_lanes AS c JOIN s ON s.topic = c.topic AND s.subscription = c.subscription
    WHERE c.lease_owner IS NULL OR c.lease_expires_at < now() OR c.lease_owner <> $4),
head AS MATERIALIZED (
    SELECT d.topic, d.lane, h.xid, h.id FROM (SELECT DISTINCT topic, lane FROM c) AS d
    CROSS JOIN LATERAL (
        SELECT m.xid, m.id FROM {schema}topic_messages AS m
        WHERE m.topic = d.topic AND m.lane = d.lane AND m.xid > 0
        ORDER BY m.xid DESC, m.id DESC LIMIT 1) AS h),
behind AS MATERIALIZED (
    SELECT c.topic, c.subscription, c.lane, c.cursor_xid, c.cursor_id, c.free, c.lease_owner, c.waiter, c.lim, head.xid AS hx, head.id AS hi,
        min(coalesce(c.lease_expires_at, '-infinity')) FILTER (WHERE c.free) OVER (PARTITION BY c.topic, c.lane) AS group_leased
    FROM c JOIN head ON head.topic = c.topic AND head.lane = c.lane AND (c.cursor_xid, c.cursor_id) < (head.xid, head.id)),
contested AS MATERIALIZED (
    SELECT DISTINCT topic, subscription FROM behind WHERE NOT free AND lease_owner <> $4 OR waiter <> $4),
fair AS MATERIALIZED (
    SELECT l.topic, l.subscription,
        greatest(ceil(count(DISTINCT l.lane)::numeric / count(DISTINCT o.owner))::int
            - count(DISTINCT l.lane) FILTER (WHERE l.lease_owner = $4 AND l.lease_expires_at >= now()), 0) AS room
    FROM {schema}topic_lanes AS l
    CROSS JOIN LATERAL (VALUES (CASE WHEN l.lease_expires_at >= now() THEN l.lease_owner END),
        (CASE WHEN l.waiting_until > now() THEN l.waiting_owner END), ($4::text)) AS o(owner)
    WHERE (l.topic, l.subscription) IN (SELECT topic, subscription FROM contested)
    GROUP BY l.topic, l.subscription),
shared AS MATERIALIZED (
    SELECT b.*, fair.room,
        row_number() OVER (PARTITION BY b.topic, b.subscription, b.free ORDER BY b.group_leased, b.lane, b.cursor_xid, b.cursor_id) AS n,
        count(*) FILTER (WHERE b.free) OVER (PARTITION BY b.topic, b.subscription) AS free_lanes
    FROM behind AS b JOIN fair ON fair.topic = b.topic AND fair.subscription = b.subscription),
ranked AS MATERIALIZED (
    SELECT b.topic, b.subscription, b.lane, b.cursor_xid, b.cursor_id, b.hx, b.hi, b.lim, b.group_leased
    FROM behind AS b WHERE b.free AND (b.topic, b.subscription) NOT IN (SELECT topic, subscription FROM contested)
    UNION ALL
    SELECT r.topic, r.subscription, r.lane, r.cursor_xid, r.cursor_id, r.hx, r.hi, r.lim, r.group_leased
    FROM shared AS r WHERE r.free AND r.n <= r.room),
f AS (
    SELECT l.topic, l.subscription, l.lane, r.hx, r.hi, r.lim
    FROM (SELECT * FROM ranked ORDER BY group_leased, topic, lane, cursor_xid, cursor_id) AS r
    JOIN {schema}topic_lanes AS l ON l.topic = r.topic AND l.subscription = r.subscription AND l.lane = r.lane
    WHERE l.lease_owner IS NULL OR l.lease_expires_at < now()
    ORDER BY r.group_leased, r.topic, r.lane, r.cursor_xid, r.cursor_id
    LIMIT $7
    FOR UPDATE OF l SKIP LOCKED),
wanted AS (
    SELECT DISTINCT ON (b.topic, b.subscription) b.topic, b.subscription, b.lane
    FROM shared AS b
    WHERE $8 > 0 AND (SELECT count(*) FROM ranked) < $7
      AND NOT b.free AND b.lease_owner <> $4 AND b.room > b.free_lanes
    ORDER BY b.topic, b.subscription, b.lane),
waiting AS (
    UPDATE {schema}topic_lanes AS w
    SET waiting_owner = $4, waiting_until = now() + make_interval(secs => $8 / 1000.0)
    FROM (
        SELECT l.topic, l.subscription, l.lane FROM wanted
        JOIN {schema}topic_lanes AS l ON l.topic = wanted.topic AND l.subscription = wanted.subscription AND l.lane = wanted.lane
        FOR UPDATE OF l SKIP LOCKED) AS x
    WHERE w.topic = x.topic AND w.subscription = x.subscription AND w.lane = x.lane
    RETURNING 1)
UPDATE {schema}topic_lanes AS l
SET lease_owner = $4, lease_token = $5::uuid, lease_expires_at = now() + make_interval(secs => $6 / 1000.0),
    attempt = l.attempt + 1,
    batch_to_xid = CASE WHEN l.attempt = 0 THEN f.hx ELSE l.batch_to_xid END,
    batch_to_id = CASE WHEN l.attempt = 0 THEN f.hi ELSE l.batch_to_id END,
    batch_limit = CASE WHEN l.attempt = 0 THEN f.lim ELSE l.batch_limit END
FROM f
WHERE l.topic = f.topic AND l.subscription = f.subscription AND l.lane = f.lane
RETURNING l.topic, l.subscription, l.lane, l.cursor_xid, l.cursor_id,
    (SELECT s.max_attempts FROM {schema}topic_subscriptions AS s WHERE s.topic = l.topic AND s.name = l.subscription),
    l.dropped, l.attempt, l.batch_to_xid, l.batch_to_id, l.batch_limit;

-- fragment: topic_ranges
-- The messages of the ranges of a read: $1 topics, $2 lanes, $3 cursor
-- xids, $4 cursor ids, $5 bound xids, $6 bound ids, $7 limits (one per
-- range); r.ord is the range's place, from 1. One index range scan per
-- range, cut at the range's bound: positions past a cursor are sequenced.
FROM unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::int[])
    WITH ORDINALITY AS r(topic, lane, cx, ci, tx, ti, lim, ord)
CROSS JOIN LATERAL (
    SELECT * FROM {schema}topic_messages AS t
    WHERE t.topic = r.topic AND t.lane = r.lane AND (t.xid, t.id) > (r.cx, r.ci) AND (t.xid, t.id) <= (r.tx, r.ti)
    ORDER BY t.xid, t.id LIMIT r.lim) AS m

-- name: TopicRead
-- The messages of each range (topic_ranges), in range order.
SELECT r.ord - 1, m.id, m.xid, m.lane, m.key, m.payload, m.metadata, m.created_at
{topic_ranges}
ORDER BY r.ord, m.xid, m.id;

-- name: TopicTail
-- $1 topic, $2 xids and $3 ids of positions, one per lane (lane i the
-- i-th), $4 limit per lane: the newest sequenced messages of each lane
-- before its position, each lane one backward range of the read index.
SELECT 0, m.id, m.xid, m.lane, m.key, m.payload, m.metadata, m.created_at
FROM unnest($2::bigint[], $3::bigint[]) WITH ORDINALITY AS b(bx, bi, ord)
CROSS JOIN LATERAL (
    SELECT * FROM {schema}topic_messages AS t
    WHERE t.topic = $1 AND t.lane = b.ord - 1 AND t.xid > 0 AND (t.xid, t.id) < (b.bx, b.bi)
    ORDER BY t.xid DESC, t.id DESC LIMIT $4) AS m
ORDER BY m.lane, m.xid, m.id;

-- name: TopicReadBudget
-- TopicRead within $8 bytes of payload and metadata, in range order: a
-- message is returned while the bytes up to it stay within the budget,
-- the first one whatever its size. Payloads over about 2 kB are TOASTed,
-- and those of messages past the budget are never fetched. A read of a
-- remote consumer (drover.ReceiveParams.MaxBytes); a client's own reads
-- are bounded in rows and skip the sizes.
SELECT b.range, b.id, b.xid, b.lane, b.key, b.payload, b.metadata, b.created_at FROM (
    SELECT r.ord - 1 AS range, m.id, m.xid, m.lane, m.key, m.payload, m.metadata, m.created_at,
        octet_length(m.payload) + octet_length(m.metadata::text) AS size,
        sum(octet_length(m.payload) + octet_length(m.metadata::text))
            OVER (ORDER BY r.ord, m.xid, m.id ROWS UNBOUNDED PRECEDING) AS run
    {topic_ranges}) AS b
WHERE b.run <= $8 OR b.run = b.size
ORDER BY b.range, b.xid, b.id;

-- name: TopicAck
-- $1 topics, $2 subscriptions, $3 lanes, $4 tokens, $5 cursor xids, $6
-- cursor ids, $7 counts, $8 keeps, $9 limits of kept lanes, $10 lease ms of
-- kept lanes. Fenced by the lease token; the cursor only moves forward. A
-- kept lane stays leased under the same token, extended, as a new batch
-- delivered once and bounded by its limit alone, unless it delivers one
-- message at a time or another consumer waits for it (marked by its
-- lease: TopicLease): then it is freed. A lane delivering its suspect
-- region one message at a time (attempt 2 or more) shrinks the region by
-- the batch's count and delivers the rest of it as delivered once; any
-- other ack resets the attempt. Returns the indexes of accepted acks and whether each lane was
-- kept.
UPDATE {schema}topic_lanes AS l
SET cursor_xid = a.cx, cursor_id = a.ci,
    lease_owner = CASE WHEN a.keep AND l.attempt <= 1 AND NOT coalesce(l.waiting_until > now() AND l.waiting_owner <> l.lease_owner, false) THEN l.lease_owner END,
    lease_token = CASE WHEN a.keep AND l.attempt <= 1 AND NOT coalesce(l.waiting_until > now() AND l.waiting_owner <> l.lease_owner, false) THEN l.lease_token END,
    lease_expires_at = CASE WHEN a.keep AND l.attempt <= 1 AND NOT coalesce(l.waiting_until > now() AND l.waiting_owner <> l.lease_owner, false)
        THEN now() + make_interval(secs => $10 / 1000.0) ELSE now() END,
    attempt = CASE
        WHEN a.keep AND l.attempt <= 1 AND NOT coalesce(l.waiting_until > now() AND l.waiting_owner <> l.lease_owner, false) THEN 1
        WHEN l.attempt >= 2 AND l.batch_limit > a.n AND (a.cx, a.ci) < (l.batch_to_xid, l.batch_to_id) THEN 1
        ELSE 0 END,
    batch_to_xid = CASE WHEN a.keep AND l.attempt <= 1 AND NOT coalesce(l.waiting_until > now() AND l.waiting_owner <> l.lease_owner, false) THEN 9223372036854775807 ELSE l.batch_to_xid END,
    batch_to_id = CASE WHEN a.keep AND l.attempt <= 1 AND NOT coalesce(l.waiting_until > now() AND l.waiting_owner <> l.lease_owner, false) THEN 9223372036854775807 ELSE l.batch_to_id END,
    batch_limit = CASE
        WHEN a.keep AND l.attempt <= 1 AND NOT coalesce(l.waiting_until > now() AND l.waiting_owner <> l.lease_owner, false) THEN a.lim
        WHEN l.attempt >= 2 THEN greatest(l.batch_limit - a.n, 0)
        ELSE 0 END
FROM unnest($1::text[], $2::text[], $3::int[], $4::uuid[], $5::bigint[], $6::bigint[], $7::int[], $8::bool[], $9::int[])
    WITH ORDINALITY AS a(topic, sub, lane, token, cx, ci, n, keep, lim, ord)
WHERE l.topic = a.topic AND l.subscription = a.sub AND l.lane = a.lane AND l.lease_token = a.token
  AND (l.cursor_xid, l.cursor_id) <= (a.cx, a.ci)
RETURNING a.ord - 1, l.lease_token IS NOT NULL;

-- name: TopicExtend
-- $1 topics, $2 subscriptions, $3 lanes, $4 tokens, $5 lease ms.
UPDATE {schema}topic_lanes AS l
SET lease_expires_at = now() + make_interval(secs => $5 / 1000.0)
FROM unnest($1::text[], $2::text[], $3::int[], $4::uuid[]) WITH ORDINALITY AS a(topic, sub, lane, token, ord)
WHERE l.topic = a.topic AND l.subscription = a.sub AND l.lane = a.lane AND l.lease_token = a.token
RETURNING a.ord - 1;

-- name: TopicRelease
-- $1 topics, $2 subscriptions, $3 lanes, $4 tokens. Frees the lanes still
-- held under their tokens where they stand, taking back the delivery their
-- lease counted. Returns the indexes of those released.
UPDATE {schema}topic_lanes AS l
SET lease_owner = NULL, lease_token = NULL, lease_expires_at = now(), attempt = greatest(l.attempt - 1, 0)
FROM unnest($1::text[], $2::text[], $3::int[], $4::uuid[]) WITH ORDINALITY AS a(topic, sub, lane, token, ord)
WHERE l.topic = a.topic AND l.subscription = a.sub AND l.lane = a.lane AND l.lease_token = a.token
RETURNING a.ord - 1;

-- name: TopicLanes
-- $1 topic, $2 subscription: its lanes with the sequenced messages past
-- each cursor (one count per lane; the caller runs a sequencing pass
-- first, as for TopicLag) and the holder of a live lease.
SELECT l.lane, l.cursor_xid, l.cursor_id,
    (SELECT count(*) FROM {schema}topic_messages AS m
     WHERE m.topic = l.topic AND m.lane = l.lane AND (m.xid, m.id) > (l.cursor_xid, l.cursor_id)),
    CASE WHEN l.lease_owner IS NOT NULL AND l.lease_expires_at >= now() THEN l.lease_owner END,
    CASE WHEN l.lease_owner IS NOT NULL AND l.lease_expires_at >= now() THEN l.lease_expires_at END,
    l.attempt
FROM {schema}topic_lanes AS l WHERE l.topic = $1 AND l.subscription = $2 ORDER BY l.lane;

-- name: TopicLaneExpire
-- $1 topic, $2 subscription, $3 lane: its live lease ends now, as if it
-- had expired (the delivery stays counted), and its token with it, so
-- that the holder's next extend or ack finds it lost. Returns a row when
-- it was held.
UPDATE {schema}topic_lanes SET lease_owner = NULL, lease_token = NULL, lease_expires_at = now()
WHERE topic = $1 AND subscription = $2 AND lane = $3 AND lease_owner IS NOT NULL AND lease_expires_at >= now()
RETURNING 1;

-- name: TopicRewind
-- $1 topic, $2 subscription, $3 since (NULL: the earliest message kept).
-- Each lane moves back to just before its first sequenced message
-- published at or after $3 (one index range of the lane in position
-- order, up to that message; none for the earliest, whose test of $3 is
-- a one-time filter), or to (0, 0), unless it stands there or
-- before already. Every lease ends and every token goes, so that the ack of
-- a batch out now is refused; a lane moved back counts no delivery, a live
-- lease of a lane not moved takes back the one it counted (TopicRelease).
-- The lanes are locked first (old), so that their old cursors and tokens
-- are those the update replaces. Returns each lane with its old and new
-- cursor and whether a batch was out.
WITH old AS MATERIALIZED (
    SELECT l.lane, l.cursor_xid, l.cursor_id, l.lease_token IS NOT NULL AS out
    FROM {schema}topic_lanes AS l WHERE l.topic = $1 AND l.subscription = $2
    FOR UPDATE),
target AS (
    SELECT old.*,
        CASE WHEN $3::timestamptz IS NULL THEN 0 ELSE f.xid END AS tx,
        CASE WHEN $3::timestamptz IS NULL THEN 0 ELSE f.id - 1 END AS ti
    FROM old LEFT JOIN LATERAL (
        SELECT m.xid, m.id FROM {schema}topic_messages AS m
        WHERE $3::timestamptz IS NOT NULL AND m.topic = $1 AND m.lane = old.lane AND m.xid > 0 AND m.created_at >= $3::timestamptz
        ORDER BY m.xid, m.id LIMIT 1) AS f ON true)
UPDATE {schema}topic_lanes AS l
SET cursor_xid = CASE WHEN (t.tx, t.ti) < (l.cursor_xid, l.cursor_id) THEN t.tx ELSE l.cursor_xid END,
    cursor_id = CASE WHEN (t.tx, t.ti) < (l.cursor_xid, l.cursor_id) THEN t.ti ELSE l.cursor_id END,
    attempt = CASE
        WHEN (t.tx, t.ti) < (l.cursor_xid, l.cursor_id) THEN 0
        WHEN l.lease_owner IS NOT NULL AND l.lease_expires_at >= now() THEN greatest(l.attempt - 1, 0)
        ELSE l.attempt END,
    lease_expires_at = CASE WHEN l.lease_owner IS NOT NULL AND l.lease_expires_at >= now() THEN now() ELSE l.lease_expires_at END,
    lease_owner = NULL, lease_token = NULL
FROM target AS t
WHERE l.topic = $1 AND l.subscription = $2 AND l.lane = t.lane
RETURNING l.lane, t.cursor_xid, t.cursor_id, l.cursor_xid, l.cursor_id, t.out;

-- name: SubscriptionGet
-- $1 topic, $2 name. No row: no such topic; a NULL name: no such
-- subscription.
SELECT t.name, s.name, s.max_attempts, t.lanes, s.created_at
FROM {schema}topics AS t LEFT JOIN {schema}topic_subscriptions AS s ON s.topic = t.name AND s.name = $2
WHERE t.name = $1;

-- name: TopicReceiptKey
-- $1 a new key, stored unless one is. Returns the stored key; no row when
-- another transaction stored one concurrently (the caller asks again).
WITH ins AS (
    INSERT INTO {schema}topic_receipt_key (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING RETURNING secret)
SELECT secret FROM ins
UNION ALL
SELECT secret FROM {schema}topic_receipt_key WHERE id = 1
LIMIT 1;

-- name: TopicLag
-- $1 topics, NULL for every topic. The messages past a cursor are the
-- lane's last ordinal less the ordinal of the first message past the
-- cursor, plus one (migration 029): one backward index probe per (topic,
-- lane) and one forward probe per distinct cursor standing on it, whatever
-- the backlog. Counting the messages read each lane's backlog from its
-- lowest cursor on every call, which the lag samplers of `drover serve`
-- and `drover bench fanout` ran every 250 ms: 2.5 s a call at 500,000
-- messages. A lane's oldest pending message is the first past its cursor.
WITH l AS MATERIALIZED (
    SELECT topic, subscription, lane, cursor_xid, cursor_id, dropped FROM {schema}topic_lanes
    WHERE $1::text[] IS NULL OR topic = ANY($1::text[])),
r AS MATERIALIZED (
    SELECT DISTINCT topic, lane, cursor_xid, cursor_id FROM l),
heads AS MATERIALIZED (
    SELECT k.topic, k.lane, h.ord FROM (SELECT DISTINCT topic, lane FROM r) AS k
    CROSS JOIN LATERAL (
        SELECT m.ord FROM {schema}topic_messages AS m
        WHERE m.topic = k.topic AND m.lane = k.lane AND m.xid > 0
        ORDER BY m.xid DESC, m.id DESC LIMIT 1) AS h),
p AS (
    SELECT r.topic, r.lane, r.cursor_xid, r.cursor_id, heads.ord - f.ord + 1 AS n, f.created_at AS oldest
    FROM r JOIN heads ON heads.topic = r.topic AND heads.lane = r.lane
    CROSS JOIN LATERAL (
        SELECT m.ord, m.created_at FROM {schema}topic_messages AS m
        WHERE m.topic = r.topic AND m.lane = r.lane AND (m.xid, m.id) > (r.cursor_xid, r.cursor_id)
        ORDER BY m.xid, m.id LIMIT 1) AS f)
SELECT l.topic, l.subscription, coalesce(sum(p.n), 0)::bigint, min(p.oldest), sum(l.dropped)::bigint
FROM l LEFT JOIN p ON p.topic = l.topic AND p.lane = l.lane AND p.cursor_xid = l.cursor_xid AND p.cursor_id = l.cursor_id
GROUP BY l.topic, l.subscription ORDER BY l.topic, l.subscription;

-- name: TopicSequence
-- $1 most messages. One sequencing pass (migration 020's topic_sequence):
-- the messages committed since the last pass become readable, in id
-- order. Returns how many it sequenced ($1: perhaps more are waiting), -1
-- when another pass runs. Runs alone in its transaction, never in a
-- caller's.
SELECT {schema}topic_sequence($1);

-- name: TopicPublishers
-- The open transactions of this database that have published messages,
-- oldest first (migration 020's topic_publishers).
SELECT xid, coalesce(pid, 0), coalesce(application_name, ''), coalesce(state, ''), xact_start, coalesce(gid, '')
FROM {schema}topic_publishers ORDER BY xid;

-- Retention by generations (migration 015): generation g is the partition
-- of IDs [g * 2^40, (g + 1) * 2^40); the leader rotates and drops them
-- (internal/maintenance/topics.go).

-- name: TopicGenerations
-- Oldest first; settled once no publisher that could have taken an ID of
-- it is open: every open transaction of this database that wrote to
-- topic_messages (topic_publishers, migration 020) has an xid at or past
-- the seal's xmax. Transactions of other databases, and of this one that
-- never published, do not hold a generation back. Ages are measured by
-- the database's clock, which stamped created_at and sealed_at, in
-- microseconds.
SELECT g.gen, g.created_at, g.sealed_at,
    (extract(epoch FROM now() - g.created_at) * 1000000)::bigint,
    coalesce((extract(epoch FROM now() - g.sealed_at) * 1000000)::bigint, 0),
    g.sealed_xmax IS NOT NULL AND g.sealed_xmax <= coalesce((SELECT min(p.xid) FROM {schema}topic_publishers AS p),
        pg_snapshot_xmax(pg_current_snapshot())::text::bigint),
    g.dropping,
    (SELECT CASE WHEN s.is_called THEN s.last_value ELSE s.last_value - 1 END FROM {schema}topic_message_ids AS s)
FROM {schema}topic_generations AS g ORDER BY g.gen;

-- name: TopicGenerationTopics
-- $1 first ID, $2 end ID of a generation. Each topic with a message in it,
-- and whether every lane of the topic is past every message of the lane
-- in it: one index probe per topic and per lane. A message not sequenced
-- yet (xid < 0) is past no cursor.
SELECT t.name, t.retention_ms,
    NOT EXISTS (SELECT 1 FROM {schema}topic_lanes AS l
        WHERE l.topic = t.name AND EXISTS (SELECT 1 FROM {schema}topic_messages AS m
            WHERE m.topic = l.topic AND m.lane = l.lane AND ((m.xid, m.id) > (l.cursor_xid, l.cursor_id) OR m.xid < 0)
              AND m.id >= $1 AND m.id < $2))
FROM {schema}topics AS t
WHERE EXISTS (SELECT 1 FROM {schema}topic_messages AS m WHERE m.topic = t.name AND m.id >= $1 AND m.id < $2)
ORDER BY t.name;

-- name: TopicGenerationLock
-- $1 first ID, $2 end ID of a sealed generation, in the transaction that
-- decides its drop: locks the rows of the topics with messages in it, which
-- the foreign key check of a new subscription (KEY SHARE) waits for, so
-- that the decision read after the lock sees every subscription that can
-- still be created before the drop is marked.
SELECT t.name FROM {schema}topics AS t
WHERE EXISTS (SELECT 1 FROM {schema}topic_messages AS m WHERE m.topic = t.name AND m.id >= $1 AND m.id < $2)
ORDER BY t.name
FOR UPDATE OF t;

-- name: TopicDropMark
-- $1 generation: its drop is decided.
UPDATE {schema}topic_generations SET dropping = true WHERE gen = $1;

-- name: TopicGenerationCreate
-- $1 generation: its partition and row (committed before any ID of it is
-- handed out, so that no publish finds no partition).
SELECT {schema}topic_generation_create($1);

-- name: TopicSequenceMove
-- $1 first ID of the new generation. setval is not transactional: the
-- next publish anywhere takes an ID of the new generation.
SELECT setval('{schema}topic_message_ids', $1, false)
WHERE (SELECT last_value FROM {schema}topic_message_ids) < $1;

-- name: TopicSeal
-- $1 the new current generation. Runs after TopicSequenceMove, in a later
-- statement, so that its snapshot's xmax is above the xid of every
-- transaction that took an ID of an older generation.
UPDATE {schema}topic_generations
SET sealed_at = now(), sealed_xmax = pg_snapshot_xmax(pg_current_snapshot())::text::bigint
WHERE gen < $1 AND sealed_at IS NULL;

-- name: TopicPartitionState
-- $1 generation: NULL when its partition is not attached to topic_messages
-- (detached, or gone), else whether its detach is pending (a DETACH …
-- CONCURRENTLY interrupted, which FINALIZE completes).
SELECT (SELECT i.inhdetachpending FROM pg_inherits AS i
    WHERE i.inhrelid = to_regclass('{schema}topic_messages_g' || $1::bigint::text)
      AND i.inhparent = '{schema}topic_messages'::regclass);

-- name: TopicGenerationDrop
-- $1 generation, detached: counts what each lane lost, drops its table
-- and row (topic_generation_drop, migration 022). Returns the messages
-- lost.
SELECT {schema}topic_generation_drop($1);

-- name: TopicPurge
-- $1 topic, $2 first ID, $3 end ID of a sealed generation, $4 lane, $5
-- xid, $6 id where the last call stopped, $7 limit. Deletes up to $7
-- messages of the topic from the generation, those after ($4, $5, $6) in
-- (lane, xid, id) order, the read index's: each call starts past the rows
-- the last one deleted instead of walking over their index entries again
-- (they stay until vacuum). Messages not sequenced yet (xid < 0) come
-- first in their lane, and no lane has passed them. Each lane first adds
-- the deleted messages it had not passed to dropped. Returns how many were deleted, how many of
-- them some lane had not passed, and the (lane, xid, id) of the last.
WITH doomed AS MATERIALIZED (
    SELECT m.id, m.lane, m.xid FROM {schema}topic_messages AS m
    WHERE m.topic = $1 AND m.id >= $2 AND m.id < $3 AND (m.lane, m.xid, m.id) > ($4, $5, $6)
    ORDER BY m.lane, m.xid, m.id
    LIMIT $7),
gone AS (
    DELETE FROM {schema}topic_messages AS m USING doomed AS d
    WHERE m.id = d.id AND m.id >= $2 AND m.id < $3
    RETURNING m.lane, m.xid, m.id),
lost AS (
    SELECT l.subscription, l.lane, count(*) AS n
    FROM {schema}topic_lanes AS l JOIN gone AS g ON g.lane = l.lane AND ((g.xid, g.id) > (l.cursor_xid, l.cursor_id) OR g.xid < 0)
    WHERE l.topic = $1
    GROUP BY l.subscription, l.lane),
marked AS (
    UPDATE {schema}topic_lanes AS l SET dropped = l.dropped + lost.n FROM lost
    WHERE l.topic = $1 AND l.subscription = lost.subscription AND l.lane = lost.lane
    RETURNING lost.n),
last AS (
    SELECT lane, xid, id FROM doomed ORDER BY lane DESC, xid DESC, id DESC LIMIT 1)
SELECT (SELECT count(*) FROM gone), (SELECT coalesce(sum(n), 0) FROM marked)::bigint,
    coalesce((SELECT lane FROM last), $4), coalesce((SELECT xid FROM last), $5), coalesce((SELECT id FROM last), $6);

-- Routing and the worker registry (migration 016; droverdriver/routing.go).

-- name: WorkerSeen
-- Upserts workers as seen now, $1-$6 parallel arrays (names distinct):
-- type, labels, owner and kinds replace the stored ones; queues ($4, each
-- a JSON array) are merged with the stored ones while the owner is the
-- same (a remote worker names one queue per claim), replaced when another
-- process took the name; started_at is kept while the owner is the same.
-- $7 says which workers are plain (they said nothing of themselves); $8
-- holds each one's kinds as a JSON array, NULL for one that named none.
INSERT INTO {schema}workers AS w (name, plain, type, labels, queues, owner, source, started_at, last_seen, kinds)
SELECT name, plain, type, labels, ARRAY(SELECT jsonb_array_elements_text(queues)), owner, source, now(), now(),
    CASE WHEN kinds IS NOT NULL THEN ARRAY(SELECT jsonb_array_elements_text(kinds::jsonb)) END
FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::jsonb[], $5::text[], $6::text[], $7::boolean[], $8::text[])
    AS p(name, type, labels, queues, owner, source, plain, kinds)
ON CONFLICT (name) DO UPDATE
SET plain = excluded.plain, type = excluded.type, labels = excluded.labels, kinds = excluded.kinds,
    queues = CASE WHEN w.owner = excluded.owner
        THEN ARRAY(SELECT DISTINCT q FROM unnest(w.queues || excluded.queues) AS q ORDER BY q)
        ELSE excluded.queues END,
    started_at = CASE WHEN w.owner = excluded.owner THEN w.started_at ELSE excluded.started_at END,
    owner = excluded.owner, source = excluded.source, last_seen = excluded.last_seen;

-- name: WorkerGone
DELETE FROM {schema}workers WHERE name = $1 AND owner = $2;

-- name: WorkerList
SELECT name, plain, type, labels, queues, owner, source, started_at, last_seen, kinds FROM {schema}workers ORDER BY name;

-- name: WorkerPrune
DELETE FROM {schema}workers WHERE last_seen < $1;

-- name: RouteWaiting
-- The routed jobs that wait (available, due or scheduled), grouped by
-- queue, routing and kind: how many, the oldest run_at and the lowest ID.
-- At most $1 groups. Reads jobs_route_idx's rows, never a plain job.
SELECT queue, routing, kind, count(*), min(run_at), min(id)
FROM {schema}jobs
WHERE state = 'available' AND route IS NOT NULL
GROUP BY queue, routing, kind
ORDER BY queue, min(id)
LIMIT $1;

-- name: KindsWaiting
-- The first $2 plain jobs of queue $1 that wait, in claim order (the
-- claim index, which the LIMIT stops), grouped by kind: how many, the
-- oldest run_at and the lowest ID.
SELECT kind, count(*), min(run_at), min(id) FROM (
    SELECT kind, run_at, id FROM {schema}jobs
    WHERE state = 'available' AND route IS NULL AND queue = $1
    ORDER BY priority, run_at, id LIMIT $2
) h
GROUP BY kind
ORDER BY min(id);

-- name: JobRouteAbsent
-- The leader's absent-worker policy ($1 now, $2 the most jobs): routed
-- jobs aimed at worker names, whose on_absent is fallback or fail, that
-- have waited at least their absent_after_ms (run_at that far past) while
-- no worker of their names was seen in that time (no registry row with a
-- later last_seen, nor one whose owner holds a running job under a lease
-- that has not expired: a remote worker busy with a long job claims
-- nothing, but its lease extensions show it is there). Fallback jobs are keyed by their type from then on,
-- their names kept as fell_back_from; failed jobs end as discarded with
-- an error naming the workers, and are returned as JobRescue returns the
-- jobs it ends. Fallback jobs are returned with state available, for the
-- caller to wake their queues. Reads the hot table's routed rows only, in
-- the order of their partial index (jobs_route_idx), and changes them by
-- key: the leader runs it every rescue interval whether or not any job is
-- routed, and on a hot table that has grown and been emptied, ordering by
-- id walked the whole primary key at an estimate high enough to buy a JIT
-- compile on every run (TestJobRouteAbsentPlan).
WITH due AS (
    SELECT j.id, j.routing ->> 'on_absent' AS policy
    FROM {schema}jobs j
    WHERE j.state = 'available' AND j.route IS NOT NULL AND j.routing -> 'names' IS NOT NULL
      AND j.routing ->> 'on_absent' IN ('fallback', 'fail')
      AND j.run_at <= $1::timestamptz - coalesce((j.routing ->> 'absent_after_ms')::bigint, 0) * interval '1 millisecond'
      AND NOT EXISTS (
          SELECT 1 FROM {schema}workers w
          WHERE w.name IN (SELECT jsonb_array_elements_text(j.routing -> 'names'))
            AND (w.last_seen > $1::timestamptz - coalesce((j.routing ->> 'absent_after_ms')::bigint, 0) * interval '1 millisecond'
                 OR EXISTS (SELECT 1 FROM {schema}jobs r
                            WHERE r.state = 'running' AND r.lease_owner = w.owner AND r.lease_expires_at > $1)))
    ORDER BY j.queue, j.route, j.priority, j.run_at, j.id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
),
fell AS (
    UPDATE {schema}jobs j
    SET route = 't:' || (j.routing ->> 'type'),
        routing = (j.routing - 'names') || jsonb_build_object('fell_back_from', j.routing -> 'names')
    WHERE j.id = ANY(ARRAY(SELECT id FROM due WHERE policy = 'fallback')) AND j.routing ->> 'type' IS NOT NULL
    RETURNING j.id, j.queue
),
done AS (
    DELETE FROM {schema}jobs j WHERE j.id = ANY(ARRAY(SELECT id FROM due WHERE policy = 'fail')) RETURNING j.*
),
moved AS (
    INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, args, metadata, tags, attempt,
        max_attempts, errors, error_count, timeout_ms, created_at, run_at, attempted_at, finalized_at, batch_id, flow,
        ordering_key, key_limit, route, routing)
    SELECT id, 'discarded', queue, kind, priority, args, metadata, tags, attempt, max_attempts,
        jsonb_path_query_array(coalesce(errors, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
            'attempt', attempt, 'at', $1::timestamptz, 'error', format(
                'no worker named %s was seen for %s ms: failed by the job''s on_absent policy',
                (SELECT string_agg(n, ', ') FROM jsonb_array_elements_text(routing -> 'names') AS n),
                coalesce(routing ->> 'absent_after_ms', '0')))),
            '$[last - {errors_kept} + 1 to last]'),
        error_count + 1,
        timeout_ms, created_at, run_at, attempted_at, $1, batch_id, flow, ordering_key, key_limit, route, routing
    FROM done
)
SELECT id, 'discarded', flow & 27 /*FlowEnd*/, queue, ordering_key FROM done
UNION ALL
SELECT id, 'available', 0, queue, NULL FROM fell;

-- name: BulkTaskInsert
-- $1 action, $2-$4 the filter (queue, kind, state), $5 IDs selected, $6
-- status, $7 now, $8 how many tasks to keep: older ones are deleted in the
-- same statement.
WITH ins AS (
    INSERT INTO {schema}bulk_tasks (action, queue, kind, state, selected, status, started_at, updated_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING id
), old AS (
    DELETE FROM {schema}bulk_tasks WHERE id <= (SELECT id FROM ins) - $8
)
SELECT id FROM ins;

-- name: BulkTaskUpdate
UPDATE {schema}bulk_tasks SET status = $2, matched = $3, changed = $4, error = $5, updated_at = $6 WHERE id = $1;

-- name: BulkTaskGet
SELECT id, action, queue, kind, state, selected, status, matched, changed, error, started_at, updated_at
FROM {schema}bulk_tasks WHERE id = $1;

-- name: ShardGet
SELECT fleet, idx, key_shards, draining FROM {schema}fleet_shard;

-- name: ShardLastIDs
-- The last job ID and batch ID drawn, NULL for a sequence never used (or
-- moved by setval and not used since).
SELECT pg_sequence_last_value(pg_get_serial_sequence('{schema}jobs', 'id')::regclass),
       pg_sequence_last_value(pg_get_serial_sequence('{schema}batches', 'id')::regclass);

-- name: ShardAttach
-- $1 fleet, $2 index, $3 key shards, $4 the first ID of the shard's range:
-- records the shard and moves the job, batch and bulk task sequences to
-- the range unless they are in it already.
WITH rec AS (
    INSERT INTO {schema}fleet_shard (fleet, idx, key_shards) VALUES ($1, $2, $3) RETURNING idx
), seqs AS (
    SELECT pg_get_serial_sequence('{schema}' || t, 'id')::regclass AS seq
    FROM unnest(ARRAY['jobs', 'batches', 'bulk_tasks']) AS t
)
SELECT setval(seq, greatest($4::bigint, coalesce(pg_sequence_last_value(seq) + 1, 1)), false)
FROM seqs, rec;

-- name: ShardSetDraining
UPDATE {schema}fleet_shard SET draining = $1;

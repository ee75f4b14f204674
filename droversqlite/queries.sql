-- Every statement the SQLite driver runs. "{schema}" becomes the table
-- prefix ("drover_"). SQLite has no array parameters, so statements that
-- cover a batch take one JSON array or object and unpack it with json_each:
-- one statement per batch, never one per job (inserts bind their values in
-- multi-row VALUES instead, see JobInsertHead). Times are unix microseconds;
-- parameters named "now" come from the Go clock, which every process on the
-- machine shares.

-- name: JobInsertHead
-- JobInsertMany runs this head followed by one JobInsertRow per job (see
-- insertSizes in executor.go). Multi-row VALUES measured about 25% faster
-- here than unpacking a JSON array with json_each, since binding a value
-- costs less than extracting it from JSON. args and metadata arrive as
-- bytes, which SQLite would store as BLOBs, hence the CASTs to TEXT.
INSERT INTO {schema}jobs (queue, kind, args, metadata, tags, priority, max_attempts, run_at, timeout_ms, created_at) VALUES

-- name: JobInsertRow
(?, ?, CAST(? AS TEXT), CAST(? AS TEXT), ?, ?, ?, ?, ?, ?)

-- name: JobInsertRoutedHead
-- JobInsertHead for routed jobs without a key or a unique key: the same
-- multi-row VALUES with the route key and the routing (JSON) last
-- (JobInsertRoutedRow), so that routed jobs are inserted in batches as
-- plain ones are, not one statement each as keyed ones.
INSERT INTO {schema}jobs (queue, kind, args, metadata, tags, priority, max_attempts, run_at, timeout_ms, created_at,
    route, routing) VALUES

-- name: JobInsertRoutedRow
(?, ?, CAST(? AS TEXT), CAST(? AS TEXT), ?, ?, ?, ?, ?, ?, ?, ?)

-- name: JobInsertKeyed
-- One job with an ordering key or a unique key (plain jobs take the
-- multi-row JobInsertHead). ?1-?10 as JobInsertRow, ?11 ordering key or
-- NULL, ?12 key limit, ?13 unique key or NULL, ?14 the queue its unique key
-- is scoped to ('' for none: InsertParams.UniqueByQueue); a unique key is
-- always scoped to the kind. A keyed job starts available
-- only if no job of its key is blocked or pending on other jobs (a workflow
-- step holds its place in its key while it waits) and fewer than its key
-- limit are active; otherwise it waits as blocked. The write lock serialises this
-- with every promotion. A unique key that another job holds skips the row
-- (no row changed); otherwise UniqueClaim takes the key next, under the
-- same write lock, so nothing can take it in between. A unique job carries
-- flow bit 8 (FlowUnique), a keyed one bit 16 (FlowKeyed). Routed jobs
-- (droverdriver.Routing) take this statement too, with their route key
-- (?15) and routing (?16), NULL for jobs without.
INSERT INTO {schema}jobs (queue, kind, args, metadata, tags, priority, max_attempts, run_at, timeout_ms, created_at,
    ordering_key, key_limit, route, routing, flow, state)
SELECT ?1, ?2, CAST(?3 AS TEXT), CAST(?4 AS TEXT), ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?15, ?16,
    CASE WHEN ?13 IS NULL THEN 0 ELSE 8 /*FlowUnique*/ END | CASE WHEN ?11 IS NULL THEN 0 ELSE 16 /*FlowKeyed*/ END,
    CASE WHEN ?11 IS NULL THEN 'available'
         -- order: a key with a rate (key_rates) starts its jobs through
         -- KeyPromote, which the caller runs next and which spends tokens.
         WHEN EXISTS (SELECT 1 FROM {schema}key_rates WHERE queue = ?1 AND ordering_key = ?11) THEN 'blocked'
         WHEN NOT EXISTS (SELECT 1 FROM {schema}jobs WHERE queue = ?1 AND ordering_key = ?11 AND state IN ('blocked', 'pending'))
          AND (SELECT count(*) FROM {schema}jobs WHERE queue = ?1 AND ordering_key = ?11 AND state IN ('available', 'running')) < ?12
         THEN 'available'
         ELSE 'blocked' END
WHERE ?13 IS NULL
   OR NOT EXISTS (SELECT 1 FROM {schema}unique_keys WHERE kind = ?2 AND queue = ?14 AND unique_key = ?13 AND held);

-- name: UniqueClaim
-- ?1 job ID, ?2 unique key, ?3 final states it keeps the key in, ?4 kind,
-- ?5 queue ('' unless scoped by queue). The unique index of held keys
-- stands behind JobInsertKeyed's check: a second holder fails the insert
-- rather than being stored.
INSERT INTO {schema}unique_keys (job_id, unique_key, final_states, kind, queue) VALUES (?1, ?2, ?3, ?4, ?5);

-- name: UniqueRelease
-- ?1 JSON array of job IDs. Frees the unique keys of those that ended (are
-- in finished_jobs) in a final state their key's final_states does not
-- list. Runs in the transaction that ended them; IDs of jobs that did not
-- end, or hold no key, match nothing.
UPDATE {schema}unique_keys SET held = 0
WHERE job_id IN (SELECT value FROM json_each(?1)) AND held
  AND EXISTS (SELECT 1 FROM {schema}finished_jobs AS f
              WHERE f.id = {schema}unique_keys.job_id
                AND final_states & CASE f.state WHEN 'completed' THEN 1 /*FinalCompleted*/ WHEN 'cancelled' THEN 2 /*FinalCancelled*/ ELSE 4 /*FinalDiscarded*/ END = 0);

-- name: UniqueHolder
-- ?1 a JSON array of jobs JobRetryRevive just revived. For each that gave
-- up its unique key: the job that holds the key now, else the lowest ID of
-- ?1 that gave up the same key, which takes it. A job whose holder is not
-- itself cannot take its key.
SELECT u.job_id, coalesce(
    (SELECT o.job_id FROM {schema}unique_keys AS o
     WHERE o.kind = u.kind AND o.queue = u.queue AND o.unique_key = u.unique_key AND o.held),
    (SELECT min(f.job_id) FROM {schema}unique_keys AS f
     WHERE f.job_id IN (SELECT value FROM json_each(?1)) AND NOT f.held
       AND f.kind = u.kind AND f.queue = u.queue AND f.unique_key = u.unique_key))
FROM {schema}unique_keys AS u
WHERE u.job_id IN (SELECT value FROM json_each(?1)) AND NOT u.held;

-- name: UniqueRetake
-- ?1 a JSON array of the jobs UniqueHolder, which runs first in the same
-- write transaction, found free to take their keys: they take them.
UPDATE {schema}unique_keys AS u SET held = 1
WHERE u.job_id IN (SELECT value FROM json_each(?1)) AND NOT u.held
  AND NOT EXISTS (SELECT 1 FROM {schema}unique_keys AS o
      WHERE o.kind = u.kind AND o.queue = u.queue AND o.unique_key = u.unique_key AND o.held);

-- name: UniquePrune
-- ?1 JSON array of pruned unique jobs: their keys go with them.
DELETE FROM {schema}unique_keys WHERE job_id IN (SELECT value FROM json_each(?1));

-- name: KeyWaiting
-- ?1 JSON array of [queue, ordering key] pairs, the keys a transaction
-- ended jobs of; ?2 KeyPromote's ?4. Returns each pair once that KeyPromote
-- could change: a key with a blocked job (one search of jobs_key_idx per
-- pair), and while ?2 names retried jobs, a key with a rate (key_rates).
-- Every other key has nothing to promote, so that promote runs KeyPromote,
-- a statement of several searches and a write, only for the keys this
-- returns: most ends of keyed jobs leave no job waiting behind their key.
SELECT DISTINCT k.value ->> 0, k.value ->> 1 FROM json_each(?1) AS k
WHERE EXISTS (SELECT 1 FROM {schema}jobs
              WHERE queue = k.value ->> 0 AND ordering_key = k.value ->> 1 AND state = 'blocked')
   OR (?2 <> '[]' AND EXISTS (SELECT 1 FROM {schema}key_rates
                              WHERE queue = k.value ->> 0 AND ordering_key = k.value ->> 1));

-- name: KeyPromote
-- ?1 queue, ?2 ordering key, ?3 now, ?4 JSON array of the keyed jobs the
-- transaction retried after a failed attempt ('[]' for none). Makes the
-- oldest blocked jobs of the key available while it has room: its active
-- jobs stay within the key_limit of its next blocked job. A keyed job
-- pending on other jobs (a workflow step) holds its place: promotion stops
-- at it, and the settle that releases it makes it blocked, then promotes
-- its key.
--
-- A key with a rate (key_rates) spends one token per job promoted and per
-- job of ?4 in the key (available again, with its backoff as run_at): the
-- n-th job keeps its run_at if the bucket, refilled to now, holds a whole
-- n-th token, and otherwise runs when that token will exist (a scheduled
-- job). KeyRateSpend then takes the tokens from the bucket, going negative
-- by those reserved; see the PostgreSQL statement. Retried jobs of a key
-- without a rate are left out.
UPDATE {schema}jobs AS j
SET state = 'available',
    run_at = CASE WHEN s.tokens IS NULL OR s.n <= s.tokens THEN j.run_at
        ELSE max(j.run_at, ?3 + CAST((s.n - s.tokens) * s.period_ms * 1000.0 / s.rate AS INTEGER)) END
FROM (
    SELECT p.id, row_number() OVER (ORDER BY p.id) AS n, b.rate, b.period_ms, b.tokens
    FROM (
        SELECT id FROM (
            SELECT id FROM {schema}jobs
            WHERE queue = ?1 AND ordering_key = ?2 AND state = 'blocked'
              AND id < coalesce((SELECT min(id) FROM {schema}jobs
                                 WHERE queue = ?1 AND ordering_key = ?2 AND state = 'pending'), 9223372036854775807)
            ORDER BY id
            LIMIT max(0, coalesce((SELECT key_limit FROM {schema}jobs
                                   WHERE queue = ?1 AND ordering_key = ?2 AND state = 'blocked' ORDER BY id LIMIT 1), 0)
                         - (SELECT count(*) FROM {schema}jobs
                            WHERE queue = ?1 AND ordering_key = ?2 AND state IN ('available', 'running')))
        )
        UNION ALL
        SELECT id FROM {schema}jobs
        WHERE id IN (SELECT value FROM json_each(?4)) AND queue = ?1 AND ordering_key = ?2 AND state = 'available'
          AND EXISTS (SELECT 1 FROM {schema}key_rates WHERE queue = ?1 AND ordering_key = ?2)
    ) AS p
    LEFT JOIN (
        SELECT rate, period_ms, min(rate, tokens + rate * (?3 - refilled_at) / (period_ms * 1000.0)) AS tokens
        FROM {schema}key_rates WHERE queue = ?1 AND ordering_key = ?2
    ) AS b ON true
) AS s
WHERE j.id = s.id;

-- name: KeyRateSpend
-- ?1 queue, ?2 ordering key, ?3 now, ?4 jobs KeyPromote just promoted or
-- retried:
-- refills the key's bucket to now, as KeyPromote read it, and spends their
-- tokens. No row: the key has no rate.
UPDATE {schema}key_rates
SET tokens = min(rate, tokens + rate * (?3 - refilled_at) / (period_ms * 1000.0)) - ?4, refilled_at = ?3
WHERE queue = ?1 AND ordering_key = ?2;

-- name: KeyRateSet
-- ?1 queue, ?2 ordering key, ?3 rate, ?4 period in ms, ?5 now. Stores the
-- rate of a key inserted with KeyRate, before its job: a new bucket starts
-- full; a changed rate keeps the tokens left, up to the new rate.
INSERT INTO {schema}key_rates AS r (queue, ordering_key, rate, period_ms, tokens, refilled_at)
VALUES (?1, ?2, ?3, ?4, ?3, ?5)
ON CONFLICT (queue, ordering_key) DO UPDATE
SET rate = excluded.rate, period_ms = excluded.period_ms, tokens = min(r.tokens, excluded.rate);

-- name: KeyRatePrune
-- ?1 now, ?2 limit. Deletes the buckets of keys with no unfinished job whose
-- bucket is full again, which an insert with KeyRate would create anew, so
-- that the table follows the keys in use. The write lock keeps inserts out
-- meanwhile.
DELETE FROM {schema}key_rates
WHERE (queue, ordering_key) IN (
    SELECT r.queue, r.ordering_key FROM {schema}key_rates r
    WHERE r.tokens + r.rate * (?1 - r.refilled_at) / (r.period_ms * 1000.0) >= r.rate
      AND NOT EXISTS (SELECT 1 FROM {schema}jobs j WHERE j.queue = r.queue AND j.ordering_key = r.ordering_key)
    LIMIT ?2
);

-- name: QueueLimitTake
-- ?1 queue, ?2 now, ?3 the most the claim wants. Refills the queue's rate
-- bucket for the time since the last limited claim and returns how many
-- jobs the claim may take under the queue's stored settings: none while it
-- is paused; the queue's rows claimed under its limits and still running
-- (counted from jobs_limited_idx) stay within max running; and each job
-- needs a whole token. The limits come from queue_settings, never from the
-- claimer. It runs in the claim's write transaction, so nothing
-- interleaves with the count. Strict order (strict > 0) caps the running
-- rows the same way. The second column says whether the queue has a rate,
-- so that QueueLimitSpend runs only then, the third whether it is in
-- strict order, so that the claim takes its head (JobClaimStrict): both
-- read here, under the lock, not from the claimer's cached settings. A
-- queue whose settings row is gone returns no row, and is claimed as if
-- unlimited.
INSERT INTO {schema}queue_limits AS l (queue, tokens, refilled_at)
SELECT queue, rate, ?2 FROM {schema}queue_settings WHERE queue = ?1
ON CONFLICT (queue) DO UPDATE
SET tokens = (SELECT CASE WHEN s.rate = 0 THEN 0
                  ELSE min(s.rate, l.tokens + s.rate * (?2 - l.refilled_at) / (s.period_ms * 1000.0)) END
              FROM {schema}queue_settings s WHERE s.queue = ?1),
    refilled_at = ?2
RETURNING (SELECT CASE WHEN s.paused THEN 0 ELSE max(0, min(?3,
    CASE WHEN s.max_running > 0 OR s.strict > 0
        THEN (CASE WHEN s.max_running > 0 AND (s.strict = 0 OR s.max_running < s.strict) THEN s.max_running ELSE s.strict END)
             - (SELECT count(*) FROM {schema}jobs WHERE queue = ?1 AND limited = 1 AND state = 'running')
        ELSE ?3 END,
    CASE WHEN s.rate > 0 THEN CAST(tokens AS INTEGER) ELSE ?3 END)) END
    FROM {schema}queue_settings s WHERE s.queue = ?1),
    (SELECT s.rate > 0 FROM {schema}queue_settings s WHERE s.queue = ?1),
    (SELECT s.strict > 0 FROM {schema}queue_settings s WHERE s.queue = ?1);

-- name: QueueLimitSpend
-- ?1 queue, ?2 jobs just claimed under its rate: each spends a token.
UPDATE {schema}queue_limits SET tokens = tokens - ?2 WHERE queue = ?1;

-- name: QueueSettingsGet
SELECT queue, paused, max_running, rate, period_ms, strict, updated_at, paused_kinds FROM {schema}queue_settings WHERE queue = ?1;

-- name: QueueKnown
-- ?1 queue. Every arm is an index lookup (finished_jobs_queue_idx of
-- migration 024 for finished jobs); the workers' registry is small.
SELECT EXISTS (SELECT 1 FROM {schema}queue_settings WHERE queue = ?1)
    OR EXISTS (SELECT 1 FROM {schema}jobs WHERE queue = ?1)
    OR EXISTS (SELECT 1 FROM {schema}workers AS w, json_each(w.queues) AS q WHERE q.value = ?1)
    OR EXISTS (SELECT 1 FROM {schema}finished_jobs WHERE queue = ?1);

-- name: QueueSettingsList
SELECT queue, paused, max_running, rate, period_ms, strict, updated_at, paused_kinds FROM {schema}queue_settings ORDER BY queue;

-- name: QueueSettingsSet
-- ?1 queue, ?2 paused (NULL keeps it), ?3 whether ?4-?6 (max running,
-- rate, period in ms) replace the limits, ?7 now, ?8 a JSON array of kinds
-- to add to the paused kinds, ?9 one of kinds to take out of them, ?10
-- strict (NULL keeps it). Writes the settings given and keeps the others;
-- the paused kinds stay a sorted JSON array without duplicates.
INSERT INTO {schema}queue_settings AS s (queue, paused, max_running, rate, period_ms, strict, updated_at, paused_kinds)
VALUES (?1, coalesce(?2, 0),
    CASE WHEN ?3 THEN ?4 ELSE 0 END, CASE WHEN ?3 THEN ?5 ELSE 0 END, CASE WHEN ?3 THEN ?6 ELSE 0 END,
    coalesce(?10, 0), ?7,
    (SELECT json_group_array(k) FROM (SELECT DISTINCT value AS k FROM json_each(?8)
        WHERE value NOT IN (SELECT value FROM json_each(?9)) ORDER BY k)))
ON CONFLICT (queue) DO UPDATE
SET paused = coalesce(?2, s.paused),
    max_running = CASE WHEN ?3 THEN excluded.max_running ELSE s.max_running END,
    rate = CASE WHEN ?3 THEN excluded.rate ELSE s.rate END,
    period_ms = CASE WHEN ?3 THEN excluded.period_ms ELSE s.period_ms END,
    strict = coalesce(?10, s.strict),
    updated_at = ?7,
    paused_kinds = (SELECT json_group_array(k) FROM (
        SELECT value AS k FROM json_each(s.paused_kinds) UNION SELECT value FROM json_each(?8)
        EXCEPT SELECT value FROM json_each(?9) ORDER BY k))
RETURNING queue, paused, max_running, rate, period_ms, strict, updated_at, paused_kinds;

-- name: KeyBlocked
-- The keys that have blocked jobs, for the promotion sweep. The ordering_key
-- condition lets SQLite use jobs_key_idx, which holds keyed rows only,
-- instead of scanning the hot table of a queue of plain jobs.
SELECT DISTINCT queue, ordering_key FROM {schema}jobs
WHERE state = 'blocked' AND ordering_key IS NOT NULL
LIMIT ?1;

-- name: JobSequenceRaise
-- ?1 is the highest job ID this process has handed out. A rolled-back
-- insert takes its AUTOINCREMENT counter back with it, and the next insert
-- would reuse its IDs, which a PostgreSQL sequence never does: an ID that a
-- caller saw once must not name another job later. Raising the counter
-- before each insert keeps IDs unique within this process. (Another process
-- cannot know of IDs that were rolled back here.)
UPDATE sqlite_sequence SET seq = ?1 WHERE name = '{schema}jobs' AND seq < ?1;

-- name: JobSequenceCreate
-- The counter row exists only once the table had a committed insert.
INSERT INTO sqlite_sequence (name, seq)
SELECT '{schema}jobs', ?1
WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = '{schema}jobs');

-- name: JobClaimable
-- ?1 queue, ?2 now. Whether the queue has a job due, read on a WAL reader
-- before a claim: a poll of an idle queue then never takes the write lock,
-- which every other writer of the file, in this process or another, would
-- queue behind (across processes, in SQLite's busy handler, which sleeps
-- 1, 2, 5, 10 ms... between tries). A job committed after the read is
-- claimed at the next poll or wake-up.
--
-- Plain and routed jobs are read apart, each from its own partial index
-- (jobs_claim_idx holds plain jobs only, jobs_route_idx routed ones;
-- migration 016): one condition over both would match neither index.
SELECT EXISTS (SELECT 1 FROM {schema}jobs WHERE state = 'available' AND queue = ?1 AND route IS NULL AND run_at <= ?2)
    OR EXISTS (SELECT 1 FROM {schema}jobs WHERE state = 'available' AND queue = ?1 AND route IS NOT NULL AND run_at <= ?2);

-- name: QueuesDue
-- ?1 JSON array of queues, ?2 now. Which of a client's queues have a job
-- due (droverdriver.QueuesDueExecutor): JobClaimable's read for every
-- queue at once, on a reader, so that a client's poll is one statement
-- whatever the number of its queues.
SELECT q.value FROM json_each(?1) q
WHERE EXISTS (SELECT 1 FROM {schema}jobs WHERE state = 'available' AND queue = q.value AND route IS NULL AND run_at <= ?2)
   OR EXISTS (SELECT 1 FROM {schema}jobs WHERE state = 'available' AND queue = q.value AND route IS NOT NULL AND run_at <= ?2);

-- name: JobClaim
-- ?1 queue, ?2 max, ?3 owner, ?4 now, ?5 lease expiry, ?6 limited (1 under
-- the queue's limits), ?7 the claim's lease token (driver.LeaseToken, its
-- 16 bytes); JobClaimAfter adds ?8-?10, the claim order position to
-- start past (ClaimParams.After). The subquery walks
-- the claim index in its order and stops after ?2 rows; the write lock the
-- statement holds keeps every other claimer out until it commits, which is
-- what FOR UPDATE SKIP LOCKED buys on PostgreSQL. RETURNING leaves out what
-- the caller knows already (queue, state, owner, the new times, the lease
-- token, and cancel_requested, which an available row never has set) and turns default
-- tags and metadata into NULL: every column read costs, and a NULL costs
-- least. route IS NULL: plain jobs only, from jobs_claim_idx, which holds
-- nothing else (migration 016); routed jobs are claimed by JobClaimRouted.
UPDATE {schema}jobs
SET state = 'running',
    attempt = attempt + 1,
    attempted_at = ?4,
    lease_owner = ?3,
    lease_expires_at = ?5,
    limited = ?6, -- order: 1 when claimed under the queue's limits (limits.go)
    lease_token = ?7
WHERE id IN (
    SELECT id FROM {schema}jobs
    WHERE state = 'available' AND queue = ?1 AND route IS NULL AND run_at <= ?4 /*after*/
    ORDER BY priority, run_at, id
    LIMIT ?2
)
RETURNING id, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at,
    nullif(tags, '[]'), nullif(metadata, '{}'), errors, args, batch_id, flow,
    ordering_key, -- order: the key tells the finish to promote (NULL for plain jobs)
    error_count;

-- name: JobClaimRouted
-- The claim of a worker that says what it is (ClaimParams.Worker); see
-- JobClaimRouted in the PostgreSQL driver for what it reads and what it
-- may walk past. ?1-?7 as JobClaim's, ?8 the kinds (a JSON array, NULL:
-- every kind; ?15 the kinds paused in the queue, left waiting, '[]' for
-- none), ?9 the worker's type, ?10 its name, ?11 its labels (a JSON
-- object), each NULL when it has none, ?12-?14 the claim order position to
-- start past (NULL: from the head). One range of the claim indexes per
-- key the worker can match, each read in claim order up to ?2 rows; the
-- write lock keeps every other claimer out meanwhile. The match is the
-- one droverdriver.Worker.Matches makes in Go, but for what a key already
-- says (a job keyed by type has no names: names would key it), and each
-- JSON test is skipped, by a search of the text, when the job's routing
-- has no such field (a quote inside a JSON string is escaped, so '"type":'
-- is only ever a key): most routed jobs ask for one thing, and parsing
-- the JSON of every row was a tenth of a routed claim.
UPDATE {schema}jobs
SET state = 'running',
    attempt = attempt + 1,
    attempted_at = ?4,
    lease_owner = ?3,
    lease_expires_at = ?5,
    limited = ?6,
    lease_token = ?7
WHERE id IN (
    SELECT id FROM (
        SELECT * FROM (SELECT id, priority, run_at FROM {schema}jobs AS j
            WHERE state = 'available' AND queue = ?1 AND route IS NULL AND run_at <= ?4
              AND (?8 IS NULL OR kind IN (SELECT value FROM json_each(?8))) AND kind NOT IN (SELECT value FROM json_each(?15))
              AND (?12 IS NULL OR (priority, run_at, id) > (?12, ?13, ?14))
            ORDER BY priority, run_at, id LIMIT ?2)
        UNION ALL
        SELECT * FROM (SELECT id, priority, run_at FROM {schema}jobs AS j
            WHERE state = 'available' AND queue = ?1 AND route = 't:' || ?9 AND run_at <= ?4
              AND (?8 IS NULL OR kind IN (SELECT value FROM json_each(?8))) AND kind NOT IN (SELECT value FROM json_each(?15))
              AND (?12 IS NULL OR (priority, run_at, id) > (?12, ?13, ?14))
              AND (instr(j.routing, '"labels":') = 0 OR NOT EXISTS (SELECT 1 FROM json_each(j.routing, '$.labels') AS l
                          WHERE NOT EXISTS (SELECT 1 FROM json_each(?11) AS w WHERE w.key = l.key AND w.value = l.value)))
            ORDER BY priority, run_at, id LIMIT ?2)
        UNION ALL
        SELECT * FROM (SELECT id, priority, run_at FROM {schema}jobs AS j
            WHERE state = 'available' AND queue = ?1 AND route = 'n:' || ?10 AND run_at <= ?4
              AND (?8 IS NULL OR kind IN (SELECT value FROM json_each(?8))) AND kind NOT IN (SELECT value FROM json_each(?15))
              AND (?12 IS NULL OR (priority, run_at, id) > (?12, ?13, ?14))
              AND (instr(j.routing, '"type":') = 0 OR j.routing ->> '$.type' = ?9)
              AND (instr(j.routing, '"labels":') = 0 OR NOT EXISTS (SELECT 1 FROM json_each(j.routing, '$.labels') AS l
                          WHERE NOT EXISTS (SELECT 1 FROM json_each(?11) AS w WHERE w.key = l.key AND w.value = l.value)))
            ORDER BY priority, run_at, id LIMIT ?2)
        UNION ALL
        SELECT * FROM (SELECT id, priority, run_at FROM {schema}jobs AS j
            WHERE state = 'available' AND queue = ?1 AND route = CASE WHEN ?10 IS NOT NULL THEN 'n*' END AND run_at <= ?4
              AND (?8 IS NULL OR kind IN (SELECT value FROM json_each(?8))) AND kind NOT IN (SELECT value FROM json_each(?15))
              AND (?12 IS NULL OR (priority, run_at, id) > (?12, ?13, ?14))
              AND (json_type(j.routing, '$.names') IS NULL OR ?10 IN (SELECT value FROM json_each(j.routing, '$.names')))
              AND (instr(j.routing, '"type":') = 0 OR j.routing ->> '$.type' = ?9)
              AND (instr(j.routing, '"labels":') = 0 OR NOT EXISTS (SELECT 1 FROM json_each(j.routing, '$.labels') AS l
                          WHERE NOT EXISTS (SELECT 1 FROM json_each(?11) AS w WHERE w.key = l.key AND w.value = l.value)))
            ORDER BY priority, run_at, id LIMIT ?2)
        UNION ALL
        SELECT * FROM (SELECT id, priority, run_at FROM {schema}jobs AS j
            WHERE state = 'available' AND queue = ?1 AND route = CASE WHEN ?11 IS NOT NULL AND ?11 <> '{}' THEN '*' END AND run_at <= ?4
              AND (?8 IS NULL OR kind IN (SELECT value FROM json_each(?8))) AND kind NOT IN (SELECT value FROM json_each(?15))
              AND (?12 IS NULL OR (priority, run_at, id) > (?12, ?13, ?14))
              AND (instr(j.routing, '"labels":') = 0 OR NOT EXISTS (SELECT 1 FROM json_each(j.routing, '$.labels') AS l
                          WHERE NOT EXISTS (SELECT 1 FROM json_each(?11) AS w WHERE w.key = l.key AND w.value = l.value)))
            ORDER BY priority, run_at, id LIMIT ?2)
    )
    ORDER BY priority, run_at, id
    LIMIT ?2
)
RETURNING id, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at,
    nullif(tags, '[]'), nullif(metadata, '{}'), errors, args, batch_id, flow, ordering_key, error_count;

-- name: QueueHead
-- What the strict queue ?1 waits on: the first job a limited claim took
-- that waits again (jobs_returned_idx, in the order they started), or
-- else the first waiting job in claim order, the smaller of the plain
-- index's first and the routed index's first; whether the head is a
-- returned job; and how many limited rows run.
WITH returned AS (
    SELECT id FROM {schema}jobs WHERE state = 'available' AND queue = ?1 AND limited = 1 ORDER BY attempted_at, id LIMIT 1
),
fresh AS (
    SELECT id FROM (
        SELECT * FROM (SELECT priority, run_at, id FROM {schema}jobs
            WHERE state = 'available' AND queue = ?1 AND route IS NULL ORDER BY priority, run_at, id LIMIT 1)
        UNION ALL
        SELECT * FROM (SELECT priority, run_at, id FROM {schema}jobs
            WHERE state = 'available' AND queue = ?1 AND route IS NOT NULL ORDER BY priority, run_at, id LIMIT 1)
    ) ORDER BY priority, run_at, id LIMIT 1
)
SELECT coalesce((SELECT id FROM returned), (SELECT id FROM fresh), 0),
    EXISTS (SELECT 1 FROM returned),
    (SELECT count(*) FROM {schema}jobs WHERE queue = ?1 AND limited = 1 AND state = 'running');

-- name: JobClaimStrict
-- The claim of a queue in strict order, in the write transaction of
-- QueueLimitTake, which found room ?2 under the queue's strict (and any
-- limit); see JobClaimStrict in the PostgreSQL driver for the rules: the
-- head of the queue, skipping nothing, as far as the claimer matches it
-- (?8-?11 and ?15 as for JobClaimRouted, a paused kind at the head
-- stopping it as one the worker cannot run does; ?11 NULL matches plain jobs only).
-- Returned jobs (limited, available again) first, in the order they
-- started, up to the first not due; otherwise the first ?2 due jobs in
-- claim order, merged from the plain index and, for each route key found
-- by a loose scan of jobs_route_idx, the first ?2 of that key, each
-- reached by one probe from the one before (heads), so the merge never
-- sorts the queue.
WITH RECURSIVE routes(route) AS (
    SELECT (SELECT route FROM {schema}jobs WHERE state = 'available' AND queue = ?1 AND route IS NOT NULL
            ORDER BY route LIMIT 1)
    UNION ALL
    SELECT (SELECT x.route FROM {schema}jobs AS x WHERE x.state = 'available' AND x.queue = ?1 AND x.route > r.route
            ORDER BY x.route LIMIT 1)
    FROM routes AS r WHERE r.route IS NOT NULL
),
heads(route, k, id, priority, run_at) AS (
    SELECT r.route, 1, j.id, j.priority, j.run_at FROM routes AS r JOIN {schema}jobs AS j ON j.id = (
        SELECT x.id FROM {schema}jobs AS x
        WHERE x.state = 'available' AND x.queue = ?1 AND x.route = r.route AND x.run_at <= ?4 AND x.limited = 0
        ORDER BY x.priority, x.run_at, x.id LIMIT 1)
    WHERE r.route IS NOT NULL
    UNION ALL
    SELECT h.route, h.k + 1, j.id, j.priority, j.run_at FROM heads AS h JOIN {schema}jobs AS j ON j.id = (
        SELECT x.id FROM {schema}jobs AS x
        WHERE x.state = 'available' AND x.queue = ?1 AND x.route = h.route AND x.run_at <= ?4 AND x.limited = 0
          AND (x.priority, x.run_at, x.id) > (h.priority, h.run_at, h.id)
        ORDER BY x.priority, x.run_at, x.id LIMIT 1)
    WHERE h.k < ?2
),
returned AS (
    SELECT id, kind, routing, run_at <= ?4 AS due, row_number() OVER (ORDER BY attempted_at, id) AS n
    FROM {schema}jobs WHERE state = 'available' AND queue = ?1 AND limited = 1
),
fresh AS (
    SELECT f.id, j.kind, j.routing, row_number() OVER (ORDER BY f.priority, f.run_at, f.id) AS n FROM (
        SELECT * FROM (
            SELECT * FROM (SELECT id, priority, run_at FROM {schema}jobs
                WHERE state = 'available' AND queue = ?1 AND route IS NULL AND run_at <= ?4 AND limited = 0
                ORDER BY priority, run_at, id LIMIT ?2)
            UNION ALL
            SELECT id, priority, run_at FROM heads
        ) ORDER BY priority, run_at, id LIMIT ?2
    ) AS f JOIN {schema}jobs AS j ON j.id = f.id
),
head AS (
    SELECT id, kind, routing, n FROM returned
    WHERE n < coalesce((SELECT min(n) FROM returned WHERE NOT due), 9223372036854775807)
    UNION ALL
    SELECT id, kind, routing, n FROM fresh WHERE NOT EXISTS (SELECT 1 FROM returned)
),
mine AS (
    SELECT id, n, coalesce((?8 IS NULL OR kind IN (SELECT value FROM json_each(?8))) AND kind NOT IN (SELECT value FROM json_each(?15)) AND (j.routing IS NULL OR (
            ?11 IS NOT NULL
            AND (j.routing ->> '$.type' IS NULL OR j.routing ->> '$.type' = ?9)
            AND (json_type(j.routing, '$.names') IS NULL OR ?10 IN (SELECT value FROM json_each(j.routing, '$.names')))
            AND NOT EXISTS (SELECT 1 FROM json_each(j.routing, '$.labels') AS l
                          WHERE NOT EXISTS (SELECT 1 FROM json_each(?11) AS w WHERE w.key = l.key AND w.value = l.value)))), 0) AS ok
    FROM head AS j
),
picked AS (
    SELECT id FROM mine
    WHERE n < coalesce((SELECT min(n) FROM mine WHERE NOT ok), 9223372036854775807)
    ORDER BY n LIMIT ?2
)
UPDATE {schema}jobs
SET state = 'running',
    attempt = attempt + 1,
    attempted_at = ?4,
    lease_owner = ?3,
    lease_expires_at = ?5,
    limited = ?6,
    lease_token = ?7
WHERE id IN (SELECT id FROM picked) AND state = 'available'
RETURNING id, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at,
    nullif(tags, '[]'), nullif(metadata, '{}'), errors, args, batch_id, flow, ordering_key, error_count;

-- name: JobFinishMove
-- Outcomes: 1 completed, 2 retry, 3 discarded, 4 cancelled, 5 released.
-- ?1 is a JSON object keyed by "id:token", the job's ID and the lease token
-- of its claim in 32 hex digits (CAST(key AS INTEGER) reads the ID, unhex
-- of the last 32 characters the token's bytes, as the claim stored them). Each value packs the attempt
-- and the outcome into one integer, attempt * 16 + outcome, or, when the
-- result carries an error, a run_at or a result, is an array [packed,
-- error or null, run_at or null, result or null]. A successful result
-- thus unpacks from json_each's key and atom alone, with no JSON parsing
-- per row. ?2 is now.
--
-- ?3 are the flow bits that turn a job away (FinishParams.Refuse): on the
-- plain path FlowEnd (27), so a job whose stored flow says its end must do
-- more (bits 1 and 2: settle; 8: free its unique key; 16: promote its key)
-- is not finished here, as when a dependant was added while it ran or a
-- remote worker did not echo the bits; the engine then finishes it on its
-- side path (these statements with ?3 = 0, then JobFinishApplied), which
-- does what the job's end asks for.
--
-- Every result is fenced by (id, attempt, lease token, state running): a
-- caller that never claimed the job cannot guess the token. A retry (a
-- failed attempt) of a job that used up its stored max_attempts finishes
-- it as discarded, whatever the caller believed its max_attempts to be. An
-- error joins the job's last {errors_kept} (driver.ErrorsKept), the oldest
-- dropped, and counts in error_count. This copies the rows that finish
-- into finished_jobs; JobFinishDelete then removes them
-- from the hot table in the same transaction. A retry or release of a job
-- whose cancel was requested finishes it as cancelled instead. The batch is
-- unpacked once into a materialized table, and CROSS JOIN keeps it as the
-- outer loop, so each result costs one primary key lookup. No RETURNING:
-- SQLite buffers returned rows in a temporary table, which measured as a
-- tenth of the cost of a finish (see JobFinish in executor.go for how the
-- accepted IDs are known without it).
INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at,
    run_at, attempted_at, finalized_at, tags, metadata, errors, error_count, args, batch_id, flow, result,
    ordering_key, key_limit, route, routing) -- order, routing: kept for JobRetry (NULL and 0 for plain jobs)
SELECT j.id,
    CASE WHEN r.outcome IN (1 /*OutcomeCompleted*/, 6 /*outcomeForget*/) THEN 'completed'
         WHEN r.outcome = 3 /*OutcomeDiscarded*/ OR (r.outcome = 2 /*OutcomeRetry*/ AND NOT j.cancel_requested) THEN 'discarded'
         ELSE 'cancelled' END,
    j.queue, j.kind, j.priority, j.attempt, j.max_attempts, j.timeout_ms, j.created_at, j.run_at, j.attempted_at, ?2,
    j.tags, j.metadata,
    CASE WHEN r.error IS NULL THEN j.errors ELSE CASE WHEN coalesce(json_array_length(j.errors), 0) < {errors_kept}
        THEN json_insert(coalesce(j.errors, '[]'), '$[#]', json(r.error))
        ELSE (SELECT json_insert(json_group_array(json(e.value)), '$[#]', json(r.error))
              FROM (SELECT value FROM json_each(j.errors)
                    WHERE key > json_array_length(j.errors) - {errors_kept} ORDER BY key) AS e) END END,
    j.error_count + (r.error IS NOT NULL),
    j.args, j.batch_id, j.flow, CASE WHEN r.outcome = 1 /*OutcomeCompleted*/ THEN r.result END, j.ordering_key, j.key_limit,
    j.route, j.routing
FROM (
    WITH p AS MATERIALIZED (
        SELECT CAST(key AS INTEGER) AS id, unhex(substr(key, -32)) AS token,
            CASE WHEN type = 'array' THEN value->>0 ELSE value END AS packed,
            CASE WHEN type = 'array' THEN nullif(value->1, 'null') END AS error,
            CASE WHEN type = 'array' THEN nullif(value->3, 'null') END AS result
        FROM json_each(?1)
    )
    SELECT id, token, packed >> 4 /*attemptShift*/ AS attempt, packed & 7 /*outcomeMask*/ AS outcome, error, result FROM p
) AS r
CROSS JOIN {schema}jobs AS j
WHERE j.id = r.id AND j.attempt = r.attempt AND j.state = 'running' AND j.lease_token = r.token
  AND (r.outcome IN (1 /*OutcomeCompleted*/, 3 /*OutcomeDiscarded*/, 4 /*OutcomeCancelled*/) OR j.cancel_requested OR (r.outcome = 2 /*OutcomeRetry*/ AND j.attempt >= j.max_attempts)
       OR (r.outcome = 6 /*outcomeForget*/ AND NOT (NOT j.cancel_requested AND j.flow & 15 /*FlowKeep*/ = 0 AND j.batch_id IS NULL)))
  AND j.flow & ?3 = 0;

-- name: JobFinishForget
-- ?1 as for JobFinishMove, ?2 as its ?3. Outcome 6 is a completion whose
-- job is deleted instead of moved (Config.DeleteCompleted): one write
-- instead of two. Such a result has no error, run_at or result, so it is
-- packed as a bare integer. A job that belongs to a batch or a workflow,
-- holds a unique key (FlowKeep, 15) or had a cancel requested is moved by
-- JobFinishMove instead.
DELETE FROM {schema}jobs
WHERE id IN (
    SELECT j.id
    FROM (SELECT CAST(key AS INTEGER) AS id, unhex(substr(key, -32)) AS token, value >> 4 /*attemptShift*/ AS attempt FROM json_each(?1)
          WHERE type = 'integer' AND value & 7 /*outcomeMask*/ = 6 /*outcomeForget*/) AS r
    CROSS JOIN {schema}jobs AS j
    WHERE j.id = r.id AND j.attempt = r.attempt AND j.state = 'running' AND j.lease_token = r.token
      AND (NOT j.cancel_requested AND j.flow & 15 /*FlowKeep*/ = 0 AND j.batch_id IS NULL) AND j.flow & ?2 = 0
);

-- name: JobFinishDelete
-- ?1 as for JobFinishMove. A job lives in exactly one of the two tables
-- outside this transaction, so the batch's jobs found in both are exactly
-- the ones JobFinishMove just copied.
DELETE FROM {schema}jobs
WHERE id IN (SELECT CAST(key AS INTEGER) FROM json_each(?1))
  AND EXISTS (SELECT 1 FROM {schema}finished_jobs AS f WHERE f.id = {schema}jobs.id);

-- name: JobFinishWait
-- Retried and released rows stay in the hot table and wait again, their
-- lease token cleared; a release undoes the attempt so that it does not
-- count against max_attempts, and waits from its run_at when given (a
-- snooze) or now. A retry waits only while the job has
-- attempts left by its stored max_attempts (JobFinishMove discards it
-- otherwise). ?1, ?2 and ?3 are as for JobFinishMove.
UPDATE {schema}jobs AS j
SET state = 'available',
    run_at = coalesce(r.run_at, ?2),
    attempt = CASE WHEN r.outcome = 5 /*OutcomeReleased*/ THEN j.attempt - 1 ELSE j.attempt END,
    errors = CASE WHEN r.error IS NULL THEN j.errors ELSE CASE WHEN coalesce(json_array_length(j.errors), 0) < {errors_kept}
        THEN json_insert(coalesce(j.errors, '[]'), '$[#]', json(r.error))
        ELSE (SELECT json_insert(json_group_array(json(e.value)), '$[#]', json(r.error))
              FROM (SELECT value FROM json_each(j.errors)
                    WHERE key > json_array_length(j.errors) - {errors_kept} ORDER BY key) AS e) END END,
    error_count = j.error_count + (r.error IS NOT NULL),
    lease_owner = NULL,
    lease_expires_at = NULL,
    lease_token = NULL
FROM (
    WITH p AS MATERIALIZED (
        SELECT CAST(key AS INTEGER) AS id, unhex(substr(key, -32)) AS token,
            CASE WHEN type = 'array' THEN value->>0 ELSE value END AS packed,
            CASE WHEN type = 'array' THEN nullif(value->1, 'null') END AS error,
            CASE WHEN type = 'array' THEN value->>2 END AS run_at
        FROM json_each(?1)
    )
    SELECT id, token, packed >> 4 /*attemptShift*/ AS attempt, packed & 7 /*outcomeMask*/ AS outcome, error, run_at FROM p
    WHERE packed & 7 /*outcomeMask*/ IN (2 /*OutcomeRetry*/, 5 /*OutcomeReleased*/)
) AS r
WHERE j.id = r.id AND j.attempt = r.attempt AND j.state = 'running' AND j.lease_token = r.token
  AND NOT j.cancel_requested AND (r.outcome = 5 /*OutcomeReleased*/ OR j.attempt < j.max_attempts) AND j.flow & ?3 = 0;

-- name: JobFinishFenced
-- ?1 as for JobFinishMove: the jobs whose results pass the fence, with the
-- flow bits that make their end do more (flow & FlowEnd), their queue and
-- ordering key. Read first on the engine's side path when some result
-- may forget its job (JobFinishApplied would not find it after), or when
-- not every result passed.
SELECT j.id, j.flow & 27 /*FlowEnd*/, j.queue, j.ordering_key
FROM (SELECT CAST(key AS INTEGER) AS id, unhex(substr(key, -32)) AS token,
          (CASE WHEN type = 'array' THEN value->>0 ELSE value END) >> 4 /*attemptShift*/ AS attempt
      FROM json_each(?1)) AS r
CROSS JOIN {schema}jobs AS j
WHERE j.id = r.id AND j.attempt = r.attempt AND j.state = 'running' AND j.lease_token = r.token;

-- name: JobFinishApplied
-- ?1 JSON array of the IDs of jobs a side finish just applied results to:
-- each one as it stands after it, with its flow & FlowEnd, queue and
-- ordering key. A job is in finished jobs when it ended, in the hot table
-- (available) when it waits again, and in neither when its completion was
-- forgotten (then only its state is known: completed).
SELECT p.value, coalesce(f.state, CASE WHEN j.id IS NULL THEN 'completed' ELSE 'available' END),
    coalesce(f.flow, j.flow, 0) & 27 /*FlowEnd*/, coalesce(f.queue, j.queue, ''), coalesce(f.ordering_key, j.ordering_key)
FROM json_each(?1) AS p
LEFT JOIN {schema}finished_jobs AS f ON f.id = p.value
LEFT JOIN {schema}jobs AS j ON j.id = p.value;

-- name: Savepoint
-- A savepoint of a write transaction (executor.savepoint): each write of
-- a round has one, and a finish's bet another inside it. ROLLBACK TO and
-- RELEASE name the innermost savepoint of the name, so they nest.
SAVEPOINT drover_write;

-- name: SavepointRollback
ROLLBACK TO drover_write;

-- name: SavepointRelease
RELEASE drover_write;

-- name: JobHeartbeat
-- ?1 is a JSON object mapping "id:token" (as in JobFinishMove) to the
-- attempt, ?2 the new lease expiry. Fenced like a finish, so that a caller
-- without the claim's token extends nothing. It returns the attempts still
-- held; the rest are lost.
UPDATE {schema}jobs AS j
SET lease_expires_at = ?2
FROM (SELECT CAST(key AS INTEGER) AS id, unhex(substr(key, -32)) AS token, value AS attempt FROM json_each(?1)) AS r
WHERE j.id = r.id AND j.attempt = r.attempt AND j.state = 'running' AND j.lease_token = r.token
RETURNING id, cancel_requested;

-- name: JobRescueMark
-- ?1 cutoff, ?2 limit, ?3 now, ?4 now as RFC 3339 text for the recorded
-- error. Takes back the leases that expired before the cutoff, oldest
-- first: each row gets the lease error (kept among the last {errors_kept})
-- and returns to available; rows out
-- of attempts (or asked to cancel) keep their run_at and are reported with
-- finish = 1 so that JobRescueMove and JobRescueDelete finish them in the
-- same transaction. Being a write, this first statement also takes the
-- write lock before anything is read.
UPDATE {schema}jobs
SET state = 'available',
    run_at = CASE WHEN attempt >= max_attempts OR cancel_requested THEN run_at ELSE ?3 END,
    errors = CASE WHEN coalesce(json_array_length(errors), 0) < {errors_kept}
        THEN json_insert(coalesce(errors, '[]'), '$[#]', json_object('attempt', attempt, 'at', ?4,
        'error', 'lease expired: the worker stopped heartbeating (crashed or lost its connection)'))
        ELSE (SELECT json_insert(json_group_array(json(e.value)), '$[#]', json_object('attempt', attempt, 'at', ?4,
        'error', 'lease expired: the worker stopped heartbeating (crashed or lost its connection)'))
              FROM (SELECT value FROM json_each(errors)
                    WHERE key > json_array_length(errors) - {errors_kept} ORDER BY key) AS e) END,
    error_count = error_count + 1,
    lease_owner = NULL,
    lease_expires_at = NULL,
    lease_token = NULL
WHERE id IN (
    SELECT id FROM {schema}jobs
    WHERE state = 'running' AND lease_expires_at < ?1
    ORDER BY lease_expires_at
    LIMIT ?2
)
RETURNING id, attempt >= max_attempts OR cancel_requested AS finish, cancel_requested, flow & 27 /*FlowEnd*/, queue, ordering_key;

-- name: JobRescueMove
-- ?1 JSON array of the IDs JobRescueMark reported to finish, ?2 now.
INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at,
    run_at, attempted_at, finalized_at, tags, metadata, errors, error_count, args, batch_id, flow, ordering_key, key_limit,
    route, routing)
SELECT id, CASE WHEN cancel_requested THEN 'cancelled' ELSE 'discarded' END,
    queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at, attempted_at, ?2,
    tags, metadata, errors, error_count, args, batch_id, flow, ordering_key, key_limit, route, routing
FROM {schema}jobs
WHERE id IN (SELECT value FROM json_each(?1));

-- name: JobRescueDelete
DELETE FROM {schema}jobs WHERE id IN (SELECT value FROM json_each(?1));

-- name: JobPrune
-- A NULL cutoff (negative retention) matches nothing: those jobs are kept.
-- Returns each pruned job's unique bit, so that UniquePrune removes the keys
-- of the unique ones in the same transaction.
DELETE FROM {schema}finished_jobs
WHERE id IN (
    SELECT id FROM {schema}finished_jobs
    WHERE (state = 'completed' AND finalized_at < ?1)
       OR (state = 'cancelled' AND finalized_at < ?2)
       OR (state = 'discarded' AND finalized_at < ?3)
    LIMIT ?4
)
RETURNING id, flow & 8 /*FlowUnique*/ <> 0;

-- name: JobGet
-- ?1 id, ?2 now. Scheduled and retryable are derived from run_at here, so no
-- loop ever has to move them when their time comes.
SELECT id, CASE WHEN state = 'available' AND run_at > ?2 THEN CASE WHEN attempt = 0 THEN 'scheduled' ELSE 'retryable' END ELSE state END,
    queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at, attempted_at, NULL,
    lease_owner, lease_expires_at, cancel_requested, tags, metadata, errors, args, batch_id, ordering_key, error_count, routing
FROM {schema}jobs WHERE id = ?1
UNION ALL
SELECT id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at, attempted_at, finalized_at,
    NULL, NULL, 0, tags, metadata, errors, args, batch_id, ordering_key, error_count, routing
FROM {schema}finished_jobs WHERE id = ?1
LIMIT 1;

-- fragment: search_waiting
-- The hot table's jobs inside a search window, with the state users see
-- (scheduled and retryable are available rows whose run_at is ahead of
-- ?15, now): the rows JobList and JobMatchCount filter with search_match.
-- Every search statement takes the same parameters: ?1-?14 the filter
-- (states and tags as JSON arrays, '[]' for any; args and metadata JSON
-- or NULL; times in microseconds or NULL), ?15 now, ?16 and ?17 the
-- window's exclusive bounds, ?18 the limit, ?19 and ?20 whether to read
-- the hot table and finished jobs. A search walks the rowid between ?16
-- and ?17, so it costs what its window holds, however deep it lies.
SELECT id, CASE WHEN state = 'available' AND run_at > ?15 THEN CASE WHEN attempt = 0 THEN 'scheduled' ELSE 'retryable' END ELSE state END AS state,
    queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at, attempted_at, NULL AS finalized_at,
    lease_owner, lease_expires_at, cancel_requested, tags, metadata, errors, args, batch_id, ordering_key, error_count, routing
FROM {schema}jobs WHERE ?19 AND id > ?16 AND id < ?17

-- fragment: search_finished
SELECT id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at, attempted_at, finalized_at,
    NULL AS lease_owner, NULL AS lease_expires_at, 0 AS cancel_requested, tags, metadata, errors, args, batch_id, ordering_key, error_count, routing
FROM {schema}finished_jobs WHERE ?20 AND id > ?16 AND id < ?17

-- fragment: search_match
-- The filter of a search over the columns of search_waiting or
-- search_finished: states, queue, kind, tags (all of them), args and
-- metadata containment (drover_json_contains, PostgreSQL's @>), and each
-- time's [from, to). The tag and containment tests come last, the tags'
-- skipped for the many jobs that have none: they decode JSON.
(?1 = '[]' OR state IN (SELECT value FROM json_each(?1)))
AND (?2 = '' OR queue = ?2) AND (?3 = '' OR kind = ?3)
AND (?7 IS NULL OR created_at >= ?7) AND (?8 IS NULL OR created_at < ?8)
AND (?9 IS NULL OR run_at >= ?9) AND (?10 IS NULL OR run_at < ?10)
AND (?11 IS NULL OR attempted_at >= ?11) AND (?12 IS NULL OR attempted_at < ?12)
AND (?13 IS NULL OR finalized_at >= ?13) AND (?14 IS NULL OR finalized_at < ?14)
AND (?4 = '[]' OR tags <> '[]' AND NOT EXISTS (SELECT 1 FROM json_each(?4) w WHERE w.value NOT IN (SELECT value FROM json_each(tags))))
AND (?5 IS NULL OR drover_json_contains(args, ?5)) AND (?6 IS NULL OR drover_json_contains(metadata, ?6))

-- name: JobList
-- Each table is walked in ID order inside the window and stops at the
-- limit on its own, so a page costs the same deep into a large table as
-- at its start. JobListDesc is this statement with every /*asc*/ made
-- DESC.
SELECT * FROM (
    SELECT * FROM (SELECT * FROM ({search_waiting}) WHERE {search_match} ORDER BY id /*asc*/ LIMIT ?18)
    UNION ALL
    SELECT * FROM (SELECT * FROM ({search_finished}) WHERE {search_match} ORDER BY id /*asc*/ LIMIT ?18)
)
ORDER BY id /*asc*/
LIMIT ?18;

-- name: JobIDNext
-- Where the next window of a search starts: the first job ID in (?1, ?2)
-- of a job matching the filter's states, queue (?5, '' for any) and kind
-- (?6, '' for any), in the hot table if ?3 and in finished jobs if ?4.
-- The hot table's available rows match when ?7 takes due ones, ?8
-- scheduled ones (ahead of ?10, now, never attempted) or ?9 retryable ones
-- (ahead, attempted before); its other rows when their state is in ?11 (a
-- JSON array); finished jobs when their state is in ?12 ('[]': any), ?13
-- saying those are failures only (cancelled, discarded). Each branch of
-- finished jobs runs only for the filters its guard names, and reads the
-- index that serves them in ID order: by queue, by kind, the failed jobs
-- (finished_jobs_failed_idx), or the rowid when no filter narrows them.
-- INDEXED BY holds it to that index whatever the statistics say (an
-- ANALYZE that saw five queues would have SQLite walk the rowid for a
-- queue it takes for a fifth of the jobs): within its queue or kind, the
-- index is in ID order too, so it never reads more than the rowid would.
-- The hot table, which holds no history, is walked by its rowid ('+'
-- keeps the claim indexes out: SQLite, without statistics, would read a
-- whole queue of a backlog from them to find its lowest ID). JobIDPrev is
-- this statement with /*min*/ made max and /*asc*/ made DESC.
SELECT coalesce(/*min*/min(id), 0) FROM (
    SELECT * FROM (SELECT id FROM {schema}jobs
        WHERE ?3 AND id > ?1 AND id < ?2 AND (?5 = '' OR +queue = ?5) AND (?6 = '' OR +kind = ?6)
          AND ((+state = 'available' AND ((?7 AND run_at <= ?10) OR (?8 AND run_at > ?10 AND attempt = 0) OR (?9 AND run_at > ?10 AND attempt > 0)))
               OR +state IN (SELECT value FROM json_each(?11)))
        ORDER BY id /*asc*/ LIMIT 1)
    UNION ALL
    SELECT * FROM (SELECT id FROM {schema}finished_jobs INDEXED BY {schema}finished_jobs_queue_idx
        WHERE ?4 AND ?5 <> '' AND queue = ?5 AND id > ?1 AND id < ?2 AND (?6 = '' OR +kind = ?6)
          AND (?12 = '[]' OR +state IN (SELECT value FROM json_each(?12)))
        ORDER BY id /*asc*/ LIMIT 1)
    UNION ALL
    SELECT * FROM (SELECT id FROM {schema}finished_jobs INDEXED BY {schema}finished_jobs_kind_idx
        WHERE ?4 AND ?5 = '' AND ?6 <> '' AND kind = ?6 AND id > ?1 AND id < ?2
          AND (?12 = '[]' OR +state IN (SELECT value FROM json_each(?12)))
        ORDER BY id /*asc*/ LIMIT 1)
    UNION ALL
    SELECT * FROM (SELECT id FROM {schema}finished_jobs INDEXED BY {schema}finished_jobs_failed_idx
        WHERE ?4 AND ?5 = '' AND ?6 = '' AND ?13 AND state <> 'completed' AND id > ?1 AND id < ?2
          AND +state IN (SELECT value FROM json_each(?12))
        ORDER BY id /*asc*/ LIMIT 1)
    UNION ALL
    SELECT * FROM (SELECT id FROM {schema}finished_jobs
        WHERE ?4 AND ?5 = '' AND ?6 = '' AND NOT ?13 AND id > ?1 AND id < ?2
          AND (?12 = '[]' OR +state IN (SELECT value FROM json_each(?12)))
        ORDER BY id /*asc*/ LIMIT 1)
);

-- name: JobIDBounds
-- Four ends of two rowids.
SELECT coalesce((SELECT id FROM {schema}jobs ORDER BY id LIMIT 1), 0),
    coalesce((SELECT id FROM {schema}jobs ORDER BY id DESC LIMIT 1), 0),
    coalesce((SELECT id FROM {schema}finished_jobs ORDER BY id LIMIT 1), 0),
    coalesce((SELECT id FROM {schema}finished_jobs ORDER BY id DESC LIMIT 1), 0);

-- fragment: count_waiting
-- search_waiting with only the columns search_match reads, so that a count
-- copies no errors or results.
SELECT id, CASE WHEN state = 'available' AND run_at > ?15 THEN CASE WHEN attempt = 0 THEN 'scheduled' ELSE 'retryable' END ELSE state END AS state,
    queue, kind, created_at, run_at, attempted_at, NULL AS finalized_at, tags, metadata, args
FROM {schema}jobs WHERE ?19 AND id > ?16 AND id < ?17

-- fragment: count_finished
SELECT id, state, queue, kind, created_at, run_at, attempted_at, finalized_at, tags, metadata, args
FROM {schema}finished_jobs WHERE ?20 AND id > ?16 AND id < ?17

-- name: JobMatchCount
-- The first ?18 jobs of each table inside the window, and how many of
-- them match: one row per table, the first column 1 for finished jobs (a
-- table not read counts nothing).
SELECT 0, coalesce(sum({search_match}), 0), count(*), coalesce(max(id), 0)
FROM ({count_waiting} ORDER BY id LIMIT ?18)
UNION ALL
SELECT 1, coalesce(sum({search_match}), 0), count(*), coalesce(max(id), 0)
FROM ({count_finished} ORDER BY id LIMIT ?18);

-- name: JobMatchCountByState
-- JobMatchCount per state, the filter's states (?1) empty: one row per
-- table and state found among the first ?18 jobs of each table inside the
-- window, with how many of them match and how many were read.
SELECT 0, state, coalesce(sum({search_match}), 0), count(*)
FROM ({count_waiting} ORDER BY id LIMIT ?18)
GROUP BY state
UNION ALL
SELECT 1, state, coalesce(sum({search_match}), 0), count(*)
FROM ({count_finished} ORDER BY id LIMIT ?18)
GROUP BY state;

-- name: JobCancelMove
-- ?1 a JSON array of job IDs, ?2 now. A waiting job (available, pending on
-- other jobs, or blocked behind its key) is finished as cancelled at once,
-- and returned as JobFinishFenced and JobFinishStates describe a finished
-- job.
INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at,
    run_at, attempted_at, finalized_at, tags, metadata, errors, error_count, args, batch_id, flow, ordering_key, key_limit,
    route, routing)
SELECT id, 'cancelled', queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at, attempted_at, ?2,
    tags, metadata, errors, error_count, args, batch_id, flow, ordering_key, key_limit, route, routing
FROM {schema}jobs WHERE id IN (SELECT value FROM json_each(?1)) AND state IN ('available', 'pending', 'blocked')
RETURNING id, state, flow & 27 /*FlowEnd*/, queue, ordering_key;

-- name: JobCancelDelete
DELETE FROM {schema}jobs WHERE id IN (SELECT value FROM json_each(?1)) AND state IN ('available', 'pending', 'blocked');

-- name: JobCancelFlag
-- A running job not flagged yet is flagged: its worker hears of it at the
-- next heartbeat and its result turns into cancelled.
UPDATE {schema}jobs SET cancel_requested = 1
WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'running' AND NOT cancel_requested
RETURNING id;

-- name: JobDiscardMove
-- ?1 a JSON array of job IDs, ?2 now. A waiting job is finished as discarded at once; the row
-- leaves the hot table with JobCancelDelete. The unique (8) and keyed (16)
-- bits go with it, so that the pruner and a retry find the job's unique
-- key, and the engine frees it and promotes the job's key from the row
-- returned.
INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at,
    run_at, attempted_at, finalized_at, tags, metadata, errors, error_count, args, flow, ordering_key, key_limit,
    route, routing)
SELECT id, 'discarded', queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at, attempted_at, ?2,
    tags, metadata, errors, error_count, args, (flow & 8 /*FlowUnique*/) | (flow & 16 /*FlowKeyed*/), ordering_key, key_limit,
    route, routing
FROM {schema}jobs WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'available'
RETURNING id, state, flow & 27 /*FlowEnd*/, queue, ordering_key;

-- name: JobDiscardDelete
DELETE FROM {schema}jobs WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'available';

-- name: JobRetryReschedule
-- ?1 a JSON array of job IDs, ?2 now. A scheduled or retryable job
-- becomes claimable now; an available one already is, and keeps its place.
UPDATE {schema}jobs SET run_at = ?2 WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'available' AND run_at > ?2 RETURNING id, queue;

-- name: JobRetryRevive
-- A finished job returns to the hot table under its own ID, with one more
-- attempt allowed if it had used them all. A keyed job returns to its key
-- as blocked and the caller promotes the key in the same transaction, so
-- it waits behind the key's active jobs when the key is full; its old ID
-- puts it first among the key's blocked jobs. Batch members and jobs with
-- dependants stay finished (JobRetryRefused says why). A unique job keeps
-- its unique bit (8); UniqueHolder and UniqueRetake then take its key again
-- if it gave it up. A keyed job carries FlowKeyed (16), which jobs
-- finished before migration 010 lack.
INSERT INTO {schema}jobs (id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at,
    attempted_at, tags, metadata, errors, error_count, args, batch_id, flow, ordering_key, key_limit, route, routing)
SELECT id, CASE WHEN ordering_key IS NULL THEN 'available' ELSE 'blocked' END,
    queue, kind, priority, attempt, max(max_attempts, attempt + 1), timeout_ms, created_at, ?2,
    attempted_at, tags, metadata, errors, error_count, args, batch_id,
    flow | CASE WHEN ordering_key IS NULL THEN 0 ELSE 16 /*FlowKeyed*/ END, ordering_key, key_limit, route, routing
FROM {schema}finished_jobs WHERE id IN (SELECT value FROM json_each(?1)) AND flow & 3 /*FlowSettle*/ = 0
RETURNING id, queue, ordering_key;

-- name: JobRetryRefused
-- The queue and flow of each finished job that JobRetryRevive leaves
-- finished: a batch member or a job with dependants, whose end was already
-- counted or settled.
SELECT id, queue, flow FROM {schema}finished_jobs WHERE id IN (SELECT value FROM json_each(?1)) AND flow & 3 /*FlowSettle*/ <> 0;

-- name: JobRetryDelete
-- Deletes the finished rows of the jobs JobRetryRevive copied back, and
-- nothing else: the refused ones stay.
DELETE FROM {schema}finished_jobs WHERE id IN (SELECT value FROM json_each(?1)) AND flow & 3 /*FlowSettle*/ = 0;

-- name: JobDelete
-- ?1 a JSON array of job IDs: the finished ones are deleted and returned
-- with their flow, so that UniquePrune takes the unique keys of those that
-- held one. The engine has cancelled the waiting ones of a bulk delete in
-- the same transaction, so that they are finished here.
DELETE FROM {schema}finished_jobs WHERE id IN (SELECT value FROM json_each(?1)) RETURNING id, flow;

-- name: JobCountByState
SELECT CASE WHEN state = 'available' AND run_at > ?2 THEN CASE WHEN attempt = 0 THEN 'scheduled' ELSE 'retryable' END ELSE state END AS s, count(*)
FROM {schema}jobs WHERE ?1 = '' OR queue = ?1 GROUP BY s
UNION ALL
SELECT state, count(*) FROM {schema}finished_jobs WHERE ?1 = '' OR queue = ?1 GROUP BY state;

-- name: QueueStats
-- ?1 now. One pass over the hot table only; finished jobs are never
-- counted here.
SELECT queue,
    sum(state = 'available' AND run_at <= ?1),
    sum(state = 'available' AND run_at > ?1 AND attempt = 0),
    sum(state = 'available' AND run_at > ?1 AND attempt > 0),
    sum(state = 'running'),
    min(CASE WHEN state = 'available' AND run_at <= ?1 THEN run_at END)
FROM {schema}jobs
GROUP BY queue
ORDER BY queue;

-- name: FinishedStats
-- ?1 since, ?2 until. Jobs finished in (since, until], per queue, with nearest-rank
-- percentiles of the pickup latency (microseconds) of the completed ones.
-- The index on (state, finalized_at) keeps this to the recent rows.
WITH w AS (
    SELECT queue, state, coalesce(attempted_at, run_at) - run_at AS lat
    FROM {schema}finished_jobs
    WHERE state IN ('completed', 'cancelled', 'discarded') AND finalized_at > ?1 AND finalized_at <= ?2
),
r AS (
    SELECT queue, state, lat,
        row_number() OVER (PARTITION BY queue, state ORDER BY lat) AS rn,
        count(*) OVER (PARTITION BY queue, state) AS n
    FROM w
)
SELECT queue,
    sum(state = 'completed'), sum(state = 'cancelled'), sum(state = 'discarded'),
    coalesce(max(CASE WHEN state = 'completed' AND rn = (n * 50 + 99) / 100 THEN lat END), 0),
    coalesce(max(CASE WHEN state = 'completed' AND rn = (n * 95 + 99) / 100 THEN lat END), 0),
    coalesce(max(CASE WHEN state = 'completed' AND rn = (n * 99 + 99) / 100 THEN lat END), 0)
FROM r
GROUP BY queue
ORDER BY queue;

-- name: StatsSample
-- ?1 since, ?2 until, ?3 now. A minute sample (migration 023), read on a
-- reader: the jobs waiting and running at ?3 and those finished in (?1,
-- ?2], per queue and kind, per queue and for all queues (the last a row
-- even with no job), with nearest-rank percentiles of the completed jobs'
-- pickup latency and run time in ms. The hot table is read once and
-- grouped by queue and kind before anything else, as QueueStats reads it;
-- SQLite has no grouping sets, so the small groups are summed per queue
-- and in all (counts), and only the window's completed jobs are counted
-- at their three levels (l) for the percentiles. StatsInsert then stores
-- the rows in a short write, so that the single writer never waits for
-- the read.
WITH g AS (
    SELECT queue, kind,
        sum(state = 'pending') AS pending, sum(state = 'blocked') AS blocked,
        sum(state = 'available' AND run_at <= ?3) AS available,
        sum(state = 'available' AND run_at > ?3 AND attempt = 0) AS scheduled,
        sum(state = 'available' AND run_at > ?3 AND attempt > 0) AS retryable,
        sum(state = 'running') AS running, 0 AS completed, 0 AS cancelled, 0 AS discarded
    FROM {schema}jobs
    GROUP BY queue, kind
    UNION ALL
    SELECT queue, kind, 0, 0, 0, 0, 0, 0, sum(state = 'completed'), sum(state = 'cancelled'), sum(state = 'discarded')
    FROM {schema}finished_jobs
    WHERE state IN ('completed', 'cancelled', 'discarded') AND finalized_at > ?1 AND finalized_at <= ?2
    GROUP BY queue, kind
),
c0 AS (
    SELECT queue, kind, sum(pending) AS pending, sum(blocked) AS blocked, sum(available) AS available,
        sum(scheduled) AS scheduled, sum(retryable) AS retryable, sum(running) AS running,
        sum(completed) AS completed, sum(cancelled) AS cancelled, sum(discarded) AS discarded
    FROM g GROUP BY queue, kind
),
counts AS (
    SELECT * FROM c0
    UNION ALL
    SELECT queue, '', sum(pending), sum(blocked), sum(available), sum(scheduled), sum(retryable), sum(running),
        sum(completed), sum(cancelled), sum(discarded)
    FROM c0 GROUP BY queue
    UNION ALL
    SELECT '', '', coalesce(sum(pending), 0), coalesce(sum(blocked), 0), coalesce(sum(available), 0), coalesce(sum(scheduled), 0),
        coalesce(sum(retryable), 0), coalesce(sum(running), 0), coalesce(sum(completed), 0), coalesce(sum(cancelled), 0),
        coalesce(sum(discarded), 0)
    FROM c0
),
f AS (
    SELECT queue, kind, (coalesce(attempted_at, run_at) - run_at) / 1000.0 AS pickup,
        (finalized_at - coalesce(attempted_at, finalized_at)) / 1000.0 AS run
    FROM {schema}finished_jobs
    WHERE state = 'completed' AND finalized_at > ?1 AND finalized_at <= ?2
),
l AS (
    SELECT queue AS q, kind AS k, pickup, run FROM f
    UNION ALL SELECT queue, '', pickup, run FROM f
    UNION ALL SELECT '', '', pickup, run FROM f
),
pr AS (
    SELECT q, k, pickup, row_number() OVER (PARTITION BY q, k ORDER BY pickup) AS rn, count(*) OVER (PARTITION BY q, k) AS n FROM l
),
p AS (
    SELECT q, k, max(CASE WHEN rn = (n * 50 + 99) / 100 THEN pickup END) AS p50,
        max(CASE WHEN rn = (n * 95 + 99) / 100 THEN pickup END) AS p95, max(CASE WHEN rn = (n * 99 + 99) / 100 THEN pickup END) AS p99
    FROM pr GROUP BY q, k
),
rr AS (
    SELECT q, k, run, row_number() OVER (PARTITION BY q, k ORDER BY run) AS rn, count(*) OVER (PARTITION BY q, k) AS n FROM l
),
r AS (
    SELECT q, k, max(CASE WHEN rn = (n * 50 + 99) / 100 THEN run END) AS p50,
        max(CASE WHEN rn = (n * 95 + 99) / 100 THEN run END) AS p95, max(CASE WHEN rn = (n * 99 + 99) / 100 THEN run END) AS p99
    FROM rr GROUP BY q, k
)
SELECT c.queue, c.kind, c.pending, c.blocked, c.available, c.scheduled, c.retryable, c.running, c.completed, c.cancelled, c.discarded,
    coalesce(p.p50, 0), coalesce(p.p95, 0), coalesce(p.p99, 0), coalesce(r.p50, 0), coalesce(r.p95, 0), coalesce(r.p99, 0)
FROM counts c LEFT JOIN p ON p.q = c.queue AND p.k = c.kind LEFT JOIN r ON r.q = c.queue AND r.k = c.kind;

-- name: StatsInsert
-- ?1 at, ?2 a JSON array of StatsSample's rows: the minute sample ending at
-- ?1, stored unless one is already.
INSERT OR IGNORE INTO {schema}stat_samples (resolution, at, queue, kind, pending, blocked, available, scheduled, retryable, running,
    completed, cancelled, discarded, pickup_p50, pickup_p95, pickup_p99, run_p50, run_p95, run_p99)
SELECT 60, ?1, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'),
    json_extract(value, '$[4]'), json_extract(value, '$[5]'), json_extract(value, '$[6]'), json_extract(value, '$[7]'),
    json_extract(value, '$[8]'), json_extract(value, '$[9]'), json_extract(value, '$[10]'), json_extract(value, '$[11]'),
    json_extract(value, '$[12]'), json_extract(value, '$[13]'), json_extract(value, '$[14]'), json_extract(value, '$[15]'),
    json_extract(value, '$[16]')
FROM json_each(?2);

-- name: TopicLagRecord
-- ?1 at, ?2 a JSON array of [topic, subscription, lag, oldest ms,
-- dropped]: the minute sample ending at ?1 of each subscription's lag. A
-- sample stored already is kept.
INSERT OR IGNORE INTO {schema}topic_lag_samples (resolution, at, topic, subscription, lag, oldest_ms, dropped)
SELECT 60, ?1, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'),
    json_extract(value, '$[3]'), json_extract(value, '$[4]')
FROM json_each(?2);

-- fragment: stat_bucket
-- The columns of stat_samples merged over a bucket, for a statement that
-- groups them: gauges averaged over the time their samples cover, counts
-- summed, percentiles the largest.
CAST(round(sum(pending * resolution) * 1.0 / sum(resolution)) AS INTEGER),
CAST(round(sum(blocked * resolution) * 1.0 / sum(resolution)) AS INTEGER),
CAST(round(sum(available * resolution) * 1.0 / sum(resolution)) AS INTEGER),
CAST(round(sum(scheduled * resolution) * 1.0 / sum(resolution)) AS INTEGER),
CAST(round(sum(retryable * resolution) * 1.0 / sum(resolution)) AS INTEGER),
CAST(round(sum(running * resolution) * 1.0 / sum(resolution)) AS INTEGER),
sum(completed), sum(cancelled), sum(discarded),
max(pickup_p50), max(pickup_p95), max(pickup_p99), max(run_p50), max(run_p95), max(run_p99)

-- name: StatsRollupSamples
-- ?1 the end of an hour (micros): the minute samples at or before it
-- become hourly ones (stat_bucket), the first statement of StatsRollup,
-- which then deletes them (StatsRollupDelete).
INSERT OR IGNORE INTO {schema}stat_samples (resolution, at, queue, kind, pending, blocked, available, scheduled, retryable, running,
    completed, cancelled, discarded, pickup_p50, pickup_p95, pickup_p99, run_p50, run_p95, run_p99)
SELECT 3600, (at + 3599999999) / 3600000000 * 3600000000 AS hour, queue, kind, {stat_bucket}
FROM {schema}stat_samples
WHERE resolution = 60 AND at <= ?1
GROUP BY hour, queue, kind;

-- name: StatsRollupLag
-- ?1 as for StatsRollupSamples, for subscription lag: lag averaged, ages
-- and dropped counts the largest.
INSERT OR IGNORE INTO {schema}topic_lag_samples (resolution, at, topic, subscription, lag, oldest_ms, dropped)
SELECT 3600, (at + 3599999999) / 3600000000 * 3600000000 AS hour, topic, subscription,
    CAST(round(avg(lag)) AS INTEGER), max(oldest_ms), max(dropped)
FROM {schema}topic_lag_samples
WHERE resolution = 60 AND at <= ?1
GROUP BY hour, topic, subscription;

-- name: StatsRollupDelete
-- ?1 the end of the hours just rolled up, ?2 the retention's start: the
-- minute samples rolled up, and the hourly samples before ?2, of both
-- tables; returns how many went.
DELETE FROM {schema}stat_samples WHERE (resolution = 60 AND at <= ?1) OR (resolution = 3600 AND at < ?2);

-- name: StatsRollupDeleteLag
-- StatsRollupDelete for subscription lag.
DELETE FROM {schema}topic_lag_samples WHERE (resolution = 60 AND at <= ?1) OR (resolution = 3600 AND at < ?2);

-- name: StatsHistory
-- ?1 from, ?2 to, ?3 the bucket (micros), ?4 queue, ?5 kind. The samples in
-- (?1, ?2] of the series ?4 and ?5 select ('*': each one, '' all
-- together), merged into buckets of ?3 ending on its multiples; samples
-- longer than a bucket are left out.
SELECT (at + ?3 - 1) / ?3 * ?3 AS bucket, queue, kind, {stat_bucket}
FROM {schema}stat_samples
WHERE at > ?1 AND at <= ?2 AND resolution * 1000000 <= ?3
    AND (queue = ?4 OR (?4 = '*' AND queue <> '')) AND (kind = ?5 OR (?5 = '*' AND kind <> ''))
GROUP BY bucket, queue, kind
ORDER BY bucket, queue, kind;

-- name: TopicLagHistory
-- StatsHistory for the subscriptions of topic ?4 ('' every topic): lag
-- averaged, ages and dropped counts the largest.
SELECT (at + ?3 - 1) / ?3 * ?3 AS bucket, topic, subscription,
    CAST(round(sum(lag * resolution) * 1.0 / sum(resolution)) AS INTEGER), max(oldest_ms), max(dropped)
FROM {schema}topic_lag_samples
WHERE at > ?1 AND at <= ?2 AND resolution * 1000000 <= ?3 AND (?4 = '' OR topic = ?4)
GROUP BY bucket, topic, subscription
ORDER BY bucket, topic, subscription;

-- name: LeaseOwners
SELECT lease_owner, count(*), max(lease_expires_at)
FROM {schema}jobs
WHERE state = 'running'
GROUP BY lease_owner
ORDER BY lease_owner;

-- name: LeaderElect
-- ?1 name, ?2 id, ?3 expiry, ?4 now. The upsert takes a free or expired
-- role, or extends our own; RETURNING yields no row when another holder's
-- lease is still running.
INSERT INTO {schema}leaders (name, leader_id, expires_at)
VALUES (?1, ?2, ?3)
ON CONFLICT (name) DO UPDATE
SET leader_id = excluded.leader_id, expires_at = excluded.expires_at
WHERE {schema}leaders.leader_id = excluded.leader_id OR {schema}leaders.expires_at < ?4
RETURNING leader_id;

-- name: LeaderResign
DELETE FROM {schema}leaders WHERE name = ?1 AND leader_id = ?2;

-- name: SchemaVersion
SELECT coalesce(max(version), 0) FROM {schema}schema_migrations;

-- name: MigrationsTable
CREATE TABLE IF NOT EXISTS {schema}schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
);

-- name: MigrationRecord
INSERT INTO {schema}schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3);

-- Workflows and batches (flow.go). None of these runs for plain jobs.

-- name: JobFlowMark
-- ?1 JSON object keyed by the ID of each inserted job whose flow columns
-- differ from a plain job's, valued [waiting_on, flow]; ?2 the batch ID or
-- NULL. Jobs that wait become pending, outside the claim index. A keyed
-- job keeps FlowKeyed (16), which JobInsertKeyed set.
UPDATE {schema}jobs AS j
SET waiting_on = r.value->>0,
    state = CASE WHEN r.value->>0 > 0 THEN 'pending' ELSE j.state END,
    flow = (r.value->>1) | CASE WHEN j.ordering_key IS NULL THEN 0 ELSE 16 /*FlowKeyed*/ END,
    batch_id = ?2
FROM json_each(?1) AS r
WHERE j.id = CAST(r.key AS INTEGER);

-- name: JobFlowMarkParents
-- ?1 JSON array of stored parents. Marks those that have not ended as
-- having dependants and returns them.
UPDATE {schema}jobs SET flow = flow | 2 /*FlowHasDependants*/ WHERE id IN (SELECT value FROM json_each(?1)) RETURNING id;

-- name: JobFlowEndedParents
SELECT id, state FROM {schema}finished_jobs WHERE id IN (SELECT value FROM json_each(?1));

-- name: JobFlowInsertDeps
-- ?1 JSON array of [parent, child] pairs.
INSERT OR IGNORE INTO {schema}job_deps (parent_id, child_id)
SELECT value->>0, value->>1 FROM json_each(?1);

-- name: BatchCreate
INSERT INTO {schema}batches (total, created_at) VALUES (?1, ?2);

-- name: BatchSetCallback
UPDATE {schema}batches SET callback_job_id = ?2 WHERE id = ?1;

-- name: JobFlowDoomed
-- ?1 JSON array of jobs that ended in this transaction. Returns the pending
-- dependants to cancel because a parent ended without completing, and
-- their own such dependants, recursively, each with the parent that caused
-- it (jobs asking to be released in that case are left out), and its queue
-- and ordering key: a keyed job cancelled here frees its place in its key.
WITH RECURSIVE doomed(id, cause, cause_state) AS (
    SELECT e.child_id, f.id, f.state
    FROM {schema}finished_jobs f
    JOIN {schema}job_deps e ON e.parent_id = f.id
    JOIN {schema}jobs c ON c.id = e.child_id
    WHERE f.id IN (SELECT value FROM json_each(?1)) AND f.state <> 'completed'
      AND c.state = 'pending' AND c.flow & 4 /*FlowReleaseOnParentFailure*/ = 0
    UNION
    SELECT e.child_id, d.id, 'cancelled'
    FROM doomed d
    JOIN {schema}job_deps e ON e.parent_id = d.id
    JOIN {schema}jobs c ON c.id = e.child_id
    WHERE c.state = 'pending' AND c.flow & 4 /*FlowReleaseOnParentFailure*/ = 0
)
SELECT d.id, min(d.cause), d.cause_state, c.queue, c.ordering_key
FROM doomed d JOIN {schema}jobs c ON c.id = d.id
GROUP BY d.id;

-- name: JobFlowCancelMove
-- ?1 JSON object mapping each doomed job's ID to its error message, ?2 now,
-- ?3 now as RFC 3339 text for the recorded error.
INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at,
    run_at, attempted_at, finalized_at, tags, metadata, errors, error_count, args, batch_id, flow, ordering_key, key_limit,
    route, routing)
SELECT j.id, 'cancelled', j.queue, j.kind, j.priority, j.attempt, j.max_attempts, j.timeout_ms, j.created_at, j.run_at,
    j.attempted_at, ?2, j.tags, j.metadata,
    CASE WHEN coalesce(json_array_length(j.errors), 0) < {errors_kept}
        THEN json_insert(coalesce(j.errors, '[]'), '$[#]', json_object('attempt', j.attempt, 'at', ?3, 'error', r.value))
        ELSE (SELECT json_insert(json_group_array(json(e.value)), '$[#]', json_object('attempt', j.attempt, 'at', ?3, 'error', r.value))
              FROM (SELECT value FROM json_each(j.errors)
                    WHERE key > json_array_length(j.errors) - {errors_kept} ORDER BY key) AS e) END,
    j.error_count + 1,
    j.args, j.batch_id, j.flow, j.ordering_key, j.key_limit, j.route, j.routing
FROM json_each(?1) AS r
CROSS JOIN {schema}jobs AS j
WHERE j.id = CAST(r.key AS INTEGER) AND j.state = 'pending';

-- name: JobFlowCancelDelete
DELETE FROM {schema}jobs
WHERE id IN (SELECT CAST(key AS INTEGER) FROM json_each(?1)) AND state = 'pending';

-- name: JobFlowRelease
-- ?1 JSON array of every job that ended (cancelled dependants included,
-- already gone from this table), ?2 now. Each pending dependant has one
-- parent fewer to wait for per parent that ended, and becomes available at
-- zero, due now (or when it was scheduled, if later) so that it queues
-- behind what was already waiting and after the position a producer's
-- positional claims start past; a keyed one becomes blocked, keeping its
-- run_at (its key's order follows it), and the caller promotes its key.
UPDATE {schema}jobs AS j
SET waiting_on = j.waiting_on - m.n,
    state = CASE WHEN j.waiting_on > m.n THEN 'pending'
                 WHEN j.ordering_key IS NULL THEN 'available'
                 ELSE 'blocked' END,
    run_at = CASE WHEN j.waiting_on > m.n OR j.ordering_key IS NOT NULL THEN j.run_at ELSE max(j.run_at, ?2) END
FROM (
    SELECT child_id, count(*) AS n FROM {schema}job_deps
    WHERE parent_id IN (SELECT value FROM json_each(?1))
    GROUP BY child_id
) AS m
WHERE j.id = m.child_id AND j.state = 'pending'
RETURNING queue, state, ordering_key;

-- name: JobFlowCount
-- ?1 as for JobFlowRelease, ?2 now. Counts batch members that ended on
-- their batch rows and returns the callbacks of batches now complete;
-- JobFlowCallback releases each only while it is still pending, so a
-- callback runs once however often its batch is seen complete.
UPDATE {schema}batches AS b
SET completed = b.completed + c.completed,
    cancelled = b.cancelled + c.cancelled,
    discarded = b.discarded + c.discarded,
    finished_at = CASE WHEN b.finished_at IS NULL AND b.completed + b.cancelled + b.discarded + c.n >= b.total
        THEN ?2 ELSE b.finished_at END
FROM (
    SELECT batch_id,
        sum(state = 'completed') AS completed, sum(state = 'cancelled') AS cancelled,
        sum(state = 'discarded') AS discarded, count(*) AS n
    FROM {schema}finished_jobs
    WHERE id IN (SELECT value FROM json_each(?1)) AND flow & 1 /*FlowBatchMember*/ = 1 /*FlowBatchMember*/
    GROUP BY batch_id
) AS c
WHERE b.id = c.batch_id
RETURNING callback_job_id, completed + cancelled + discarded >= total;

-- name: JobFlowCallback
-- ?2 now. A callback is released like a dependant (JobFlowRelease): due
-- now, and blocked if keyed.
UPDATE {schema}jobs SET state = CASE WHEN ordering_key IS NULL THEN 'available' ELSE 'blocked' END, waiting_on = 0,
    run_at = CASE WHEN ordering_key IS NULL THEN max(run_at, ?2) ELSE run_at END
WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'pending'
RETURNING queue, state, ordering_key;

-- name: JobFlowBlockKeyed
-- ?1 JSON array of jobs a flow insert stored. Its keyed jobs went in
-- through JobInsertKeyed before JobFlowMark made some of them pending, so
-- jobs behind a pending one in the same call may have started available:
-- they all wait as blocked, and KeyPromote then starts them in order.
UPDATE {schema}jobs SET state = 'blocked'
WHERE id IN (SELECT value FROM json_each(?1)) AND ordering_key IS NOT NULL AND state = 'available';

-- name: BatchGet
-- The counts of running and retrying members match jobs_batch_idx's
-- predicate, so they read that small index only.
-- SQLite uses a partial index only when the query repeats its terms.
SELECT b.id, b.total, b.completed, b.cancelled, b.discarded,
    (SELECT count(*) FROM {schema}jobs j WHERE j.batch_id = b.id AND j.flow & 1 /*FlowBatchMember*/ = 1 /*FlowBatchMember*/
        AND (j.state = 'running' OR j.attempt > 0) AND j.state = 'running'),
    (SELECT count(*) FROM {schema}jobs j WHERE j.batch_id = b.id AND j.flow & 1 /*FlowBatchMember*/ = 1 /*FlowBatchMember*/
        AND (j.state = 'running' OR j.attempt > 0) AND j.state = 'available'),
    coalesce(b.callback_job_id, 0), b.created_at, b.finished_at
FROM {schema}batches b WHERE b.id = ?1;

-- name: BatchList
-- ?1 the ID to list before (the driver passes the largest ID for the
-- newest), ?2 the limit: a keyset page of the primary key, each batch's
-- figures as BatchGet reads them.
SELECT b.id, b.total, b.completed, b.cancelled, b.discarded,
    (SELECT count(*) FROM {schema}jobs j WHERE j.batch_id = b.id AND j.flow & 1 /*FlowBatchMember*/ = 1 /*FlowBatchMember*/
        AND (j.state = 'running' OR j.attempt > 0) AND j.state = 'running'),
    (SELECT count(*) FROM {schema}jobs j WHERE j.batch_id = b.id AND j.flow & 1 /*FlowBatchMember*/ = 1 /*FlowBatchMember*/
        AND (j.state = 'running' OR j.attempt > 0) AND j.state = 'available'),
    coalesce(b.callback_job_id, 0), b.created_at, b.finished_at
FROM {schema}batches b WHERE b.id < ?1
ORDER BY b.id DESC
LIMIT ?2;

-- name: BatchResults
-- Members only: the callback carries the batch ID too.
SELECT id, state, kind, result FROM {schema}finished_jobs
WHERE batch_id = ?1 AND id > ?2 AND flow & 1 /*FlowBatchMember*/ = 1 /*FlowBatchMember*/
ORDER BY id
LIMIT ?3;

-- name: JobResults
-- ?1 JSON array of IDs.
SELECT id, state, kind, result FROM {schema}finished_jobs WHERE id IN (SELECT value FROM json_each(?1))
UNION ALL
SELECT id, state, kind, NULL FROM {schema}jobs WHERE id IN (SELECT value FROM json_each(?1))
ORDER BY id;

-- name: JobParentResults
SELECT f.id, f.state, f.kind, f.result
FROM {schema}job_deps e JOIN {schema}finished_jobs f ON f.id = e.parent_id
WHERE e.child_id = ?1
UNION ALL
SELECT j.id, j.state, j.kind, NULL
FROM {schema}job_deps e JOIN {schema}jobs j ON j.id = e.parent_id
WHERE e.child_id = ?1
ORDER BY 1;

-- name: JobDeps
-- ?1 JSON array of IDs: their edges as parents (the primary key) and as
-- children (job_deps_child_idx).
SELECT parent_id, child_id FROM {schema}job_deps WHERE parent_id IN (SELECT value FROM json_each(?1))
UNION
SELECT parent_id, child_id FROM {schema}job_deps WHERE child_id IN (SELECT value FROM json_each(?1))
ORDER BY 1, 2;

-- name: JobsParentResults
-- ?1 JSON array of child IDs: the parents of many jobs at once, for the
-- claims of remote workers.
SELECT e.child_id, f.id, f.state, f.kind, f.result
FROM {schema}job_deps e JOIN {schema}finished_jobs f ON f.id = e.parent_id
WHERE e.child_id IN (SELECT value FROM json_each(?1))
UNION ALL
SELECT e.child_id, j.id, j.state, j.kind, NULL
FROM {schema}job_deps e JOIN {schema}jobs j ON j.id = e.parent_id
WHERE e.child_id IN (SELECT value FROM json_each(?1))
ORDER BY 1, 2;

-- Periodic jobs (periodic.go).

-- name: PeriodicTicks
-- ?1 JSON array of periodic job names.
SELECT name, tick FROM {schema}periodic_ticks WHERE name IN (SELECT value FROM json_each(?1));

-- name: PeriodicTicksRecord
-- ?1 JSON object mapping names to ticks. Keeps the later tick: a leader
-- that lost its leadership while inserting cannot move a periodic job's
-- last tick back. WHERE true lets the parser read ON CONFLICT as the upsert
-- clause after a SELECT.
INSERT INTO {schema}periodic_ticks (name, tick)
SELECT key, value FROM json_each(?1) WHERE true
ON CONFLICT (name) DO UPDATE SET tick = max(tick, excluded.tick);

-- Stored periodic definitions (migration 014). Every statement that
-- returns definitions returns these columns, the last tick of the name
-- last: name, schedule, kind, args, queue, priority, max_attempts, tags
-- (a JSON array), source, paused, created_at, updated_at, tick.

-- name: PeriodicCreate
-- Nothing when the name is taken, by either source. ?8 tags as a JSON
-- array, ?9 now.
INSERT INTO {schema}periodic_jobs (name, schedule, kind, args, queue, priority, max_attempts, tags, source,
    created_at, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'api', ?9, ?9)
ON CONFLICT (name) DO NOTHING
RETURNING name, schedule, kind, args, queue, priority, max_attempts, tags, source, paused, created_at, updated_at,
    (SELECT t.tick FROM {schema}periodic_ticks t WHERE t.name = ?1);

-- name: PeriodicUpdate
-- Only a definition created through the API: a Go-configured one changes
-- in its Go config.
UPDATE {schema}periodic_jobs
SET schedule = ?2, kind = ?3, args = ?4, queue = ?5, priority = ?6, max_attempts = ?7, tags = ?8, updated_at = ?9
WHERE name = ?1 AND source = 'api'
RETURNING name, schedule, kind, args, queue, priority, max_attempts, tags, source, paused, created_at, updated_at,
    (SELECT t.tick FROM {schema}periodic_ticks t WHERE t.name = ?1);

-- name: PeriodicRegister
-- The leader's Go-configured entries, ?1 a JSON array of objects: each
-- replaces the row of its name (a stored definition of that name
-- included) but keeps its paused flag. A row that already says the same
-- is left alone, so that a leader change writes nothing. WHERE true lets
-- the parser read ON CONFLICT as the upsert clause after a SELECT.
INSERT INTO {schema}periodic_jobs (name, schedule, kind, args, queue, priority, max_attempts, tags, source,
    created_at, updated_at)
SELECT d.value ->> 'name', d.value ->> 'schedule', d.value ->> 'kind', d.value ->> 'args', d.value ->> 'queue',
    d.value ->> 'priority', d.value ->> 'max_attempts', d.value ->> 'tags', 'config', ?2, ?2
FROM json_each(?1) d WHERE true
ON CONFLICT (name) DO UPDATE SET schedule = excluded.schedule, kind = excluded.kind, args = excluded.args,
    queue = excluded.queue, priority = excluded.priority, max_attempts = excluded.max_attempts, tags = excluded.tags,
    source = 'config', updated_at = excluded.updated_at
WHERE (schedule, kind, args, queue, priority, max_attempts, tags, source)
    IS NOT (excluded.schedule, excluded.kind, excluded.args, excluded.queue, excluded.priority,
        excluded.max_attempts, excluded.tags, 'config');

-- name: PeriodicList
SELECT p.name, p.schedule, p.kind, p.args, p.queue, p.priority, p.max_attempts, p.tags, p.source, p.paused,
    p.created_at, p.updated_at, t.tick
FROM {schema}periodic_jobs p LEFT JOIN {schema}periodic_ticks t ON t.name = p.name
ORDER BY p.name;

-- name: PeriodicSetPaused
UPDATE {schema}periodic_jobs SET paused = ?2, updated_at = ?3
WHERE name = ?1
RETURNING name, schedule, kind, args, queue, priority, max_attempts, tags, source, paused, created_at, updated_at,
    (SELECT t.tick FROM {schema}periodic_ticks t WHERE t.name = ?1);

-- name: PeriodicDelete
DELETE FROM {schema}periodic_jobs WHERE name = ?1;

-- Topics (docs/design/topics.md, migration 013). Positions are (xid, id);
-- xid is always 0 here: one writer at a time, and ids are taken inside the
-- write transaction, so id order is commit order and every committed
-- message is readable (no horizon). With xid constant, the reads compare
-- ids alone: SQLite turns a row-value comparison on (xid, id) into a range
-- on xid only, which scanned every message of the lane.

-- name: TopicCreate
-- ?1 name, ?2 lanes, ?3 retention ms, ?4 now. An existing topic is kept.
INSERT INTO {schema}topics (name, lanes, retention_ms, created_at) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (name) DO NOTHING;

-- name: TopicList
SELECT t.name, t.lanes, t.retention_ms, t.created_at,
    (SELECT json_group_array(s.name) FROM (SELECT name FROM {schema}topic_subscriptions
        WHERE topic = t.name ORDER BY name) AS s)
FROM {schema}topics AS t ORDER BY t.name;

-- name: TopicPublish
-- ?1 now, ?2 JSON array of [topic, lane, key or null, payload in hex,
-- metadata JSON], messages of any topics. Rows are inserted in array order
-- under the write lock, so their ids are consecutive and end at
-- last_insert_rowid(). Each message takes the next ordinal of its lane
-- (migration 029): the lane's last one, from the read index's last entry
-- of the lane (one probe per lane the publish touches), and its place
-- among the publish's messages of the lane.
WITH j AS MATERIALIZED (
    SELECT key AS i, value ->> 0 AS topic, value ->> 1 AS lane, value FROM json_each(?2)),
heads AS MATERIALIZED (
    SELECT k.topic, k.lane, coalesce((
        SELECT m.ord FROM {schema}topic_messages AS m WHERE m.topic = k.topic AND m.lane = k.lane
        ORDER BY m.xid DESC, m.id DESC LIMIT 1), 0) AS ord
    FROM (SELECT DISTINCT topic, lane FROM j) AS k)
INSERT INTO {schema}topic_messages (topic, lane, key, payload, metadata, created_at, ord)
SELECT j.topic, j.lane, j.value ->> 2, unhex(j.value ->> 3), j.value ->> 4, ?1,
    h.ord + row_number() OVER (PARTITION BY j.topic, j.lane ORDER BY j.i)
FROM j JOIN heads AS h ON h.topic = j.topic AND h.lane = j.lane
ORDER BY j.i;

-- name: SubscriptionCreate
-- ?1 topic, ?2 name, ?3 max attempts, ?4 now. No row when the topic does
-- not exist or the subscription does.
INSERT INTO {schema}topic_subscriptions (topic, name, max_attempts, created_at)
SELECT ?1, ?2, ?3, ?4 FROM {schema}topics WHERE name = ?1
ON CONFLICT (topic, name) DO NOTHING;

-- name: SubscriptionLanes
-- ?1 topic, ?2 subscription, ?3 start (0 latest: after the last message
-- stored, 1 earliest: from the first). One lane row per lane of the topic.
WITH RECURSIVE n(lane) AS (SELECT 0 UNION ALL SELECT lane + 1 FROM n
    WHERE lane + 1 < (SELECT lanes FROM {schema}topics WHERE name = ?1))
INSERT INTO {schema}topic_lanes (topic, subscription, lane, cursor_xid, cursor_id)
SELECT ?1, ?2, lane, 0,
    CASE WHEN ?3 = 1 THEN 0 ELSE coalesce((SELECT max(id) FROM {schema}topic_messages), 0) END
FROM n;

-- name: TopicExists
SELECT 1 FROM {schema}topics WHERE name = ?1;

-- name: TopicDelete
-- ?1 name. TopicDeleteMessages, TopicDeleteLanes and
-- TopicDeleteSubscriptions run first, in the same transaction.
DELETE FROM {schema}topics WHERE name = ?1;

-- name: TopicDeleteMessages
DELETE FROM {schema}topic_messages WHERE topic = ?1;

-- name: TopicDeleteLanes
DELETE FROM {schema}topic_lanes WHERE topic = ?1;

-- name: TopicDeleteSubscriptions
DELETE FROM {schema}topic_subscriptions WHERE topic = ?1;

-- name: SubscriptionDelete
DELETE FROM {schema}topic_subscriptions WHERE topic = ?1 AND name = ?2;

-- name: SubscriptionDeleteLanes
DELETE FROM {schema}topic_lanes WHERE topic = ?1 AND subscription = ?2;

-- name: TopicLastID
-- The last message ID taken (0 before the first): a listener watches it
-- for publishes of other processes (notify.go).
SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = '{schema}topic_messages'), 0);

-- name: TopicLeaseCandidates
-- ?1 JSON array of the topics of ?2, ?2 JSON array of the subscriptions as
-- "topic<US>subscription" strings (US is char(31), which no name holds),
-- ?3 now, ?4 max lanes, ?5 owner. Run on a reader: free lanes (no owner,
-- or an expired lease) behind the head of their topic's lane (its last
-- message), by (topic, lane), the group with the least recently leased
-- lane first, and by cursor within a group: a lease takes whole groups,
-- whose lanes standing at one cursor are read once for all
-- (engine.PlanReads), so that one read serves as many subscriptions as
-- possible, and consumer processes take different groups rather than each
-- reading the same messages for a few subscriptions. A head is one index
-- probe however many subscriptions share it, and
-- topic_lanes_position_idx (migration 018) reaches only the lanes behind
-- it: a probe per lane for a message past its cursor was most of a
-- lease's time. Looking at a client's lanes at all is the costly part of a
-- lease; on a WAL reader it runs beside other clients' and never holds the
-- single writer, and when it finds nothing no write transaction starts at
-- all.
--
-- Fair share, as PostgreSQL's TopicLease: of each subscription another
-- consumer contests (it holds a lane behind its head, or waits for one),
-- the owner takes at most ceil(lanes / active) less the lanes it holds
-- (fair, from one pass over the subscription's lanes). The lanes the owner
-- holds itself play no part but in that count, and are left out of behind.
-- Rows with kind 1
-- name a lane held by another consumer of a subscription of which the
-- owner got less than its share: the lease marks it as waited for
-- (TopicWait). Kind 0 rows are the candidates, with the head the lease
-- bounds a new batch by.
WITH RECURSIVE lanes(topic, lane, lanes) AS (
    SELECT name, 0, lanes FROM {schema}topics WHERE name IN (SELECT value FROM json_each(?1))
    UNION ALL SELECT topic, lane + 1, lanes FROM lanes WHERE lane + 1 < lanes),
head AS MATERIALIZED (
    SELECT topic, lane, (SELECT m.id FROM {schema}topic_messages AS m
        WHERE m.topic = lanes.topic AND m.lane = lanes.lane AND m.xid = 0 ORDER BY m.xid DESC, m.id DESC LIMIT 1) AS id
    FROM lanes),
behind AS MATERIALIZED (
    SELECT l.topic, l.subscription, l.lane, l.cursor_id, l.lease_owner, head.id AS hid,
        l.lease_owner IS NULL OR l.lease_expires_at < ?3 AS free,
        CASE WHEN l.waiting_until >= ?3 THEN l.waiting_owner END AS waiter,
        min(CASE WHEN l.lease_owner IS NULL OR l.lease_expires_at < ?3 THEN coalesce(l.lease_expires_at, 0) END)
            OVER (PARTITION BY l.topic, l.lane) AS g
    FROM head CROSS JOIN {schema}topic_lanes AS l INDEXED BY {schema}topic_lanes_position_idx
    WHERE l.topic = head.topic AND l.lane = head.lane AND l.cursor_xid = 0 AND l.cursor_id < head.id
      AND (l.lease_owner IS NULL OR l.lease_expires_at < ?3 OR l.lease_owner <> ?5)
      AND l.topic || char(31) || l.subscription IN (SELECT value FROM json_each(?2))),
contested AS MATERIALIZED (
    SELECT DISTINCT topic, subscription FROM behind WHERE NOT free AND lease_owner <> ?5 OR waiter <> ?5),
fair AS MATERIALIZED (
    SELECT c.topic, c.subscription, max(0, (count(*) + active - 1) / active - mine) AS room
    FROM (
        SELECT d.topic, d.subscription,
            (SELECT count(*) FROM (
                SELECT CASE WHEN l.lease_owner IS NOT NULL AND l.lease_expires_at >= ?3 THEN l.lease_owner END AS owner
                FROM {schema}topic_lanes AS l WHERE l.topic = d.topic AND l.subscription = d.subscription
                UNION SELECT CASE WHEN l.waiting_until >= ?3 THEN l.waiting_owner END
                FROM {schema}topic_lanes AS l WHERE l.topic = d.topic AND l.subscription = d.subscription
                UNION SELECT ?5) AS o WHERE o.owner IS NOT NULL) AS active,
            (SELECT count(*) FROM {schema}topic_lanes AS l WHERE l.topic = d.topic AND l.subscription = d.subscription
                AND l.lease_owner = ?5 AND l.lease_expires_at >= ?3) AS mine
        FROM contested AS d) AS c
    JOIN {schema}topic_lanes AS l ON l.topic = c.topic AND l.subscription = c.subscription
    GROUP BY c.topic, c.subscription),
picked AS MATERIALIZED (
    SELECT topic, subscription, lane, cursor_id, hid FROM (
        SELECT b.topic, b.subscription, b.lane, b.cursor_id, b.hid, b.g FROM behind AS b
        WHERE b.free AND NOT EXISTS (SELECT 1 FROM contested AS c WHERE c.topic = b.topic AND c.subscription = b.subscription)
        UNION ALL
        SELECT topic, subscription, lane, cursor_id, hid, g FROM (
            SELECT b.*, fair.room,
                row_number() OVER (PARTITION BY b.topic, b.subscription ORDER BY b.g, b.lane, b.cursor_id) AS n
            FROM behind AS b JOIN fair ON fair.topic = b.topic AND fair.subscription = b.subscription
            WHERE b.free)
        WHERE n <= room)
    ORDER BY g, topic, lane, cursor_id LIMIT ?4)
SELECT 0, topic, subscription, lane, cursor_id, hid FROM picked
UNION ALL
SELECT 1, b.topic, b.subscription, min(b.lane), NULL, NULL FROM behind AS b JOIN fair AS f ON f.topic = b.topic AND f.subscription = b.subscription
WHERE NOT b.free AND b.lease_owner <> ?5
  AND f.room > (SELECT count(*) FROM picked AS p WHERE p.topic = f.topic AND p.subscription = f.subscription)
  AND (SELECT count(*) FROM picked) < ?4
GROUP BY b.topic, b.subscription;

-- name: TopicLease
-- ?1 JSON array of [topic, subscription, lane, cursor id, head id, limit]
-- candidates (TopicLeaseCandidates, with the subscription's batch limit),
-- ?2 owner, ?3 token (16 bytes), ?4 lease expiry, ?5 now. Leases those
-- still free and still at the cursor the reader saw: a lane whose cursor
-- has not moved still has the message the reader found past it (only
-- retention removes messages, and an emptied lane's batch is empty and
-- released at its cursor). The write lock makes the lease exclusive. Each
-- lane counts a delivery; a lane delivered before keeps its batch, a new
-- batch is bounded by the head and the limit (PostgreSQL's TopicLease).
WITH c AS MATERIALIZED (
    SELECT value ->> 0 AS topic, value ->> 1 AS sub, value ->> 2 AS lane, value ->> 3 AS ci,
        value ->> 4 AS hi, value ->> 5 AS lim FROM json_each(?1))
UPDATE {schema}topic_lanes AS l SET lease_owner = ?2, lease_token = ?3, lease_expires_at = ?4,
    attempt = l.attempt + 1,
    batch_to_xid = CASE WHEN l.attempt = 0 THEN 0 ELSE l.batch_to_xid END,
    batch_to_id = CASE WHEN l.attempt = 0 THEN c.hi ELSE l.batch_to_id END,
    batch_limit = CASE WHEN l.attempt = 0 THEN c.lim ELSE l.batch_limit END
FROM c
WHERE l.topic = c.topic AND l.subscription = c.sub AND l.lane = c.lane AND l.cursor_id = c.ci
  AND (l.lease_owner IS NULL OR l.lease_expires_at < ?5)
RETURNING topic, subscription, lane, cursor_xid, cursor_id, dropped, attempt, batch_to_xid, batch_to_id, batch_limit;

-- name: TopicWait
-- ?1 JSON array of [topic, subscription, lane], ?2 owner, ?3 until: the
-- owner waits for the lanes (TopicLeaseCandidates' kind 1 rows).
UPDATE {schema}topic_lanes SET waiting_owner = ?2, waiting_until = ?3
WHERE (topic, subscription, lane) IN (SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?1));

-- name: TopicMaxAttempts
-- ?1 JSON array of [topic, subscription]: their stored max attempts, read
-- in the lease's transaction (SQLite's RETURNING cannot run a subquery).
SELECT topic, name, max_attempts FROM {schema}topic_subscriptions
WHERE (topic, name) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?1));

-- fragment: topic_ranges
-- The IDs of the messages of the ranges of a read: ?1 a JSON array of
-- [topic, lane, cursor xid, cursor id, bound xid, bound id, limit], ?2 the
-- largest limit; r.key is the range's index. Each range's messages come
-- from the read index, up to its bound, at most ?2 (SQLite's LIMIT cannot
-- name the outer row: each range's own limit is kept after).
FROM json_each(?1) AS r
JOIN {schema}topic_messages AS m ON m.id IN (
    SELECT id FROM {schema}topic_messages
    WHERE topic = r.value ->> 0 AND lane = r.value ->> 1 AND xid = 0 AND id > r.value ->> 3 AND id <= r.value ->> 5
    ORDER BY xid, id LIMIT ?2)

-- name: TopicRead
-- The messages of each range (topic_ranges), in range order; the driver
-- keeps each range's own limit of them.
SELECT r.key, m.id, m.xid, m.lane, m.key, m.payload, m.metadata, m.created_at
{topic_ranges}
ORDER BY r.key, m.xid, m.id;

-- name: TopicTail
-- ?1 topic, ?2 JSON array of the ids of positions, one per lane (lane i
-- the i-th; xid is 0 here), ?3 limit per lane: the newest messages of each
-- lane before its position, each lane one backward range of the read
-- index.
SELECT 0, m.id, m.xid, m.lane, m.key, m.payload, m.metadata, m.created_at
FROM json_each(?2) AS b
JOIN {schema}topic_messages AS m ON m.id IN (
    SELECT id FROM {schema}topic_messages
    WHERE topic = ?1 AND lane = b.key AND xid = 0 AND id < b.value
    ORDER BY xid DESC, id DESC LIMIT ?3)
ORDER BY m.lane, m.xid, m.id;

-- name: TopicReadLane
-- ?1 topic, ?2 lane, ?3 cursor id, ?4 bound id, ?5 limit: the messages of
-- one range of a read, in order, straight off the read index (no sort), so
-- that the driver can stop stepping once a byte budget is spent and the
-- messages past it are never read. A read of a remote consumer
-- (drover.ReceiveParams.MaxBytes), one statement per range: one statement
-- for all the ranges, bounded by bytes in SQL, sorted every message it
-- read and summed their sizes in window functions, which cost several
-- times the read itself per message; a client's own reads are bounded in
-- rows and take every range in one statement (TopicRead).
SELECT 0, id, xid, lane, key, payload, metadata, created_at
FROM {schema}topic_messages
WHERE topic = ?1 AND lane = ?2 AND xid = 0 AND id > ?3 AND id <= ?4
ORDER BY xid, id LIMIT ?5;

-- name: TopicAck
-- ?1 JSON array of [topic, subscription, lane, token in hex, cursor xid,
-- cursor id, keep (0 or 1), count, limit], ?2 now, ?3 lease expiry of kept
-- lanes. Fenced by the lease token; the cursor only moves forward; a kept
-- lane stays leased under the same token, extended, unless it delivers one
-- message at a time or another consumer waits for it;
-- a lane delivering its suspect region shrinks it (PostgreSQL's TopicAck).
-- Returns the lanes it moved, and whether each was kept (SQLite's RETURNING cannot name the FROM
-- table, so the driver maps them back to acks, which name each lane at
-- most once). The acks are unpacked once (a materialized CTE): joined to
-- the lanes directly, each JSON value was extracted again for every lane
-- of the topic, which made acks the bulk of a fan-out's CPU.
WITH a AS MATERIALIZED (
    SELECT value ->> 0 AS topic, value ->> 1 AS sub, value ->> 2 AS lane, unhex(value ->> 3) AS token,
        value ->> 4 AS cx, value ->> 5 AS ci, value ->> 6 AS keep, value ->> 7 AS n, value ->> 8 AS lim
    FROM json_each(?1))
UPDATE {schema}topic_lanes AS l
SET cursor_xid = a.cx, cursor_id = a.ci,
    lease_owner = CASE WHEN a.keep AND l.attempt <= 1 AND NOT coalesce(l.waiting_until >= ?2 AND l.waiting_owner <> l.lease_owner, 0)
        THEN l.lease_owner END,
    lease_token = CASE WHEN a.keep AND l.attempt <= 1 AND NOT coalesce(l.waiting_until >= ?2 AND l.waiting_owner <> l.lease_owner, 0)
        THEN l.lease_token END,
    lease_expires_at = CASE WHEN a.keep AND l.attempt <= 1 AND NOT coalesce(l.waiting_until >= ?2 AND l.waiting_owner <> l.lease_owner, 0)
        THEN ?3 ELSE ?2 END,
    attempt = CASE
        WHEN a.keep AND l.attempt <= 1 AND NOT coalesce(l.waiting_until >= ?2 AND l.waiting_owner <> l.lease_owner, 0) THEN 1
        WHEN l.attempt >= 2 AND l.batch_limit > a.n AND (a.cx, a.ci) < (l.batch_to_xid, l.batch_to_id) THEN 1
        ELSE 0 END,
    batch_to_xid = CASE WHEN a.keep AND l.attempt <= 1 AND NOT coalesce(l.waiting_until >= ?2 AND l.waiting_owner <> l.lease_owner, 0)
        THEN 9223372036854775807 ELSE l.batch_to_xid END,
    batch_to_id = CASE WHEN a.keep AND l.attempt <= 1 AND NOT coalesce(l.waiting_until >= ?2 AND l.waiting_owner <> l.lease_owner, 0)
        THEN 9223372036854775807 ELSE l.batch_to_id END,
    batch_limit = CASE
        WHEN a.keep AND l.attempt <= 1 AND NOT coalesce(l.waiting_until >= ?2 AND l.waiting_owner <> l.lease_owner, 0) THEN a.lim
        WHEN l.attempt >= 2 THEN max(l.batch_limit - a.n, 0)
        ELSE 0 END
FROM a
WHERE l.topic = a.topic AND l.subscription = a.sub AND l.lane = a.lane AND l.lease_token = a.token
  AND (l.cursor_xid, l.cursor_id) <= (a.cx, a.ci)
RETURNING topic, subscription, lane, lease_token IS NOT NULL;

-- name: TopicExtend
-- ?1 JSON array as TopicAck's (cursors, keeps, counts and limits unused),
-- ?2 new expiry. Returns the lanes it extended.
WITH a AS MATERIALIZED (
    SELECT value ->> 0 AS topic, value ->> 1 AS sub, value ->> 2 AS lane, unhex(value ->> 3) AS token
    FROM json_each(?1))
UPDATE {schema}topic_lanes AS l SET lease_expires_at = ?2
FROM a
WHERE l.topic = a.topic AND l.subscription = a.sub AND l.lane = a.lane AND l.lease_token = a.token
RETURNING topic, subscription, lane;

-- name: TopicRelease
-- ?1 JSON array as TopicExtend's, ?2 now. Frees the lanes still held under
-- their tokens where they stand, taking back the delivery their lease
-- counted. Returns the lanes it released.
WITH a AS MATERIALIZED (
    SELECT value ->> 0 AS topic, value ->> 1 AS sub, value ->> 2 AS lane, unhex(value ->> 3) AS token
    FROM json_each(?1))
UPDATE {schema}topic_lanes AS l
SET lease_owner = NULL, lease_token = NULL, lease_expires_at = ?2, attempt = max(l.attempt - 1, 0)
FROM a
WHERE l.topic = a.topic AND l.subscription = a.sub AND l.lane = a.lane AND l.lease_token = a.token
RETURNING topic, subscription, lane;

-- name: TopicLanes
-- ?1 topic, ?2 subscription, ?3 now: its lanes with the messages past
-- each cursor and the holder of a live lease.
SELECT l.lane, l.cursor_xid, l.cursor_id,
    (SELECT count(*) FROM {schema}topic_messages AS m
     WHERE m.topic = l.topic AND m.lane = l.lane AND m.xid = 0 AND m.id > l.cursor_id),
    CASE WHEN l.lease_owner IS NOT NULL AND l.lease_expires_at >= ?3 THEN l.lease_owner END,
    CASE WHEN l.lease_owner IS NOT NULL AND l.lease_expires_at >= ?3 THEN l.lease_expires_at END,
    l.attempt
FROM {schema}topic_lanes AS l WHERE l.topic = ?1 AND l.subscription = ?2 ORDER BY l.lane;

-- name: TopicLaneExpire
-- ?1 topic, ?2 subscription, ?3 lane, ?4 now: its live lease ends now, as
-- if it had expired (PostgreSQL's TopicLaneExpire). Returns a row when it
-- was held.
UPDATE {schema}topic_lanes SET lease_owner = NULL, lease_token = NULL, lease_expires_at = ?4
WHERE topic = ?1 AND subscription = ?2 AND lane = ?3 AND lease_owner IS NOT NULL AND lease_expires_at >= ?4
RETURNING 1;

-- name: TopicRewindLanes
-- ?1 topic, ?2 subscription: each lane's cursor and whether a batch is out
-- (a lease token), read in TopicRewind's write transaction before it.
SELECT lane, cursor_xid, cursor_id, lease_token IS NOT NULL
FROM {schema}topic_lanes WHERE topic = ?1 AND subscription = ?2;

-- name: TopicRewind
-- ?1 topic, ?2 subscription, ?3 since in microseconds (NULL: the earliest
-- message kept), ?4 now. Each lane moves back to just before its first
-- message published at or after ?3 (one range of the read index, up to
-- that message), or to 0, unless it stands there or before already; every
-- lease ends and every token goes (PostgreSQL's TopicRewind). Returns each
-- lane's new cursor.
WITH t AS MATERIALIZED (
    SELECT l.lane, CASE WHEN ?3 IS NULL THEN 0 ELSE (
        SELECT m.id - 1 FROM {schema}topic_messages AS m
        WHERE m.topic = l.topic AND m.lane = l.lane AND m.xid = 0 AND m.created_at >= ?3
        ORDER BY m.xid, m.id LIMIT 1) END AS ti
    FROM {schema}topic_lanes AS l WHERE l.topic = ?1 AND l.subscription = ?2)
UPDATE {schema}topic_lanes AS l
SET cursor_id = CASE WHEN t.ti < l.cursor_id THEN t.ti ELSE l.cursor_id END,
    attempt = CASE
        WHEN t.ti < l.cursor_id THEN 0
        WHEN l.lease_owner IS NOT NULL AND l.lease_expires_at >= ?4 THEN max(l.attempt - 1, 0)
        ELSE l.attempt END,
    lease_expires_at = CASE WHEN l.lease_owner IS NOT NULL AND l.lease_expires_at >= ?4 THEN ?4 ELSE l.lease_expires_at END,
    lease_owner = NULL, lease_token = NULL
FROM t
WHERE l.topic = ?1 AND l.subscription = ?2 AND l.lane = t.lane
RETURNING lane, cursor_xid, cursor_id;

-- name: SubscriptionGet
-- ?1 topic, ?2 name. No row: no such topic; a NULL name: no such
-- subscription.
SELECT t.name, s.name, s.max_attempts, t.lanes, s.created_at
FROM {schema}topics AS t LEFT JOIN {schema}topic_subscriptions AS s ON s.topic = t.name AND s.name = ?2
WHERE t.name = ?1;

-- name: TopicReceiptKeyInsert
-- ?1 a new key, ?2 now: stored unless one is.
INSERT INTO {schema}topic_receipt_key (id, secret, created_at) VALUES (1, ?1, ?2) ON CONFLICT (id) DO NOTHING;

-- name: TopicReceiptKey
SELECT secret FROM {schema}topic_receipt_key WHERE id = 1;

-- name: TopicLag
-- ?1 JSON array of topics, NULL for every topic. The messages past a cursor
-- are the lane's last ordinal less the ordinal of the first message past
-- the cursor, plus one (migration 029): one backward index probe per
-- (topic, lane) and one forward probe per distinct cursor, whatever the
-- backlog (PostgreSQL's TopicLag). A lane's oldest pending message is the
-- first past its cursor.
WITH l AS MATERIALIZED (
    SELECT topic, subscription, lane, cursor_id, dropped FROM {schema}topic_lanes
    WHERE ?1 IS NULL OR topic IN (SELECT value FROM json_each(?1))),
r AS MATERIALIZED (
    SELECT DISTINCT topic, lane, cursor_id FROM l),
heads AS MATERIALIZED (
    SELECT k.topic, k.lane, (
        SELECT m.ord FROM {schema}topic_messages AS m WHERE m.topic = k.topic AND m.lane = k.lane AND m.xid = 0
        ORDER BY m.xid DESC, m.id DESC LIMIT 1) AS ord
    FROM (SELECT DISTINCT topic, lane FROM r) AS k),
f AS MATERIALIZED (
    SELECT r.topic, r.lane, r.cursor_id, (
        SELECT m.id FROM {schema}topic_messages AS m
        WHERE m.topic = r.topic AND m.lane = r.lane AND m.xid = 0 AND m.id > r.cursor_id
        ORDER BY m.xid, m.id LIMIT 1) AS first
    FROM r),
p AS MATERIALIZED (
    SELECT f.topic, f.lane, f.cursor_id, h.ord - m.ord + 1 AS n, m.created_at AS oldest
    FROM f JOIN heads AS h ON h.topic = f.topic AND h.lane = f.lane
    JOIN {schema}topic_messages AS m ON m.id = f.first)
SELECT l.topic, l.subscription, coalesce(sum(p.n), 0), min(p.oldest), sum(l.dropped)
FROM l LEFT JOIN p ON p.topic = l.topic AND p.lane = l.lane AND p.cursor_id = l.cursor_id
GROUP BY l.topic, l.subscription ORDER BY l.topic, l.subscription;

-- Retention by generations (migration 015): generation g is the rowid
-- range [g * 2^40, (g + 1) * 2^40); the leader rotates and drops them
-- (internal/maintenance/topics.go).

-- name: TopicGenerations
-- Oldest first. A sealed generation is settled at once: its IDs were
-- taken under the write lock before the seal. Ages are measured by the
-- machine's clock as SQLite reads it, in microseconds; SQLite's clock
-- counts milliseconds, hence the floor at zero.
SELECT g.gen, g.created_at, g.sealed_at,
    max(CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) - g.created_at, 0),
    coalesce(max(CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER) - g.sealed_at, 0), 0),
    g.sealed_at IS NOT NULL, g.dropping,
    coalesce((SELECT seq FROM sqlite_sequence WHERE name = '{schema}topic_messages'), 0)
FROM {schema}topic_generations AS g ORDER BY g.gen;

-- name: TopicGenerationTopics
-- ?1 first ID, ?2 end ID of a generation. Each topic with a message in it,
-- and whether every lane of the topic is past every message of the lane
-- in it.
SELECT t.name, t.retention_ms,
    NOT EXISTS (SELECT 1 FROM {schema}topic_lanes AS l
        WHERE l.topic = t.name AND EXISTS (SELECT 1 FROM {schema}topic_messages AS m
            WHERE m.topic = l.topic AND m.lane = l.lane AND m.xid = 0 AND m.id > l.cursor_id
              AND m.id >= ?1 AND m.id < ?2))
FROM {schema}topics AS t
WHERE EXISTS (SELECT 1 FROM {schema}topic_messages AS m WHERE m.topic = t.name AND m.id >= ?1 AND m.id < ?2)
ORDER BY t.name;

-- name: TopicGenerationCreate
-- ?1 generation, ?2 now. Seals the older ones.
INSERT INTO {schema}topic_generations (gen, created_at)
SELECT ?1, ?2 WHERE NOT EXISTS (SELECT 1 FROM {schema}topic_generations WHERE gen >= ?1);

-- name: TopicSeal
-- ?1 the new current generation, ?2 now.
UPDATE {schema}topic_generations SET sealed_at = ?2 WHERE gen < ?1 AND sealed_at IS NULL;

-- name: TopicSequenceMove
-- ?1 first ID of the new generation: the next message takes it.
UPDATE sqlite_sequence SET seq = ?1 - 1 WHERE name = '{schema}topic_messages' AND seq < ?1 - 1;

-- name: TopicSequenceCreate
-- ?1 as TopicSequenceMove, when no message was ever stored.
INSERT INTO sqlite_sequence (name, seq)
SELECT '{schema}topic_messages', ?1 - 1
WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = '{schema}topic_messages');

-- name: TopicDropMark
-- ?1 generation: its drop is decided. The write transaction that decides
-- it excludes the creation of subscriptions, so that the decision saw
-- every subscription created before the mark.
UPDATE {schema}topic_generations SET dropping = 1 WHERE gen = ?1;

-- A generation marked dropping leaves a chunk per write transaction:
-- TopicDropNext finds the chunk's first ID, TopicChunkLost counts what
-- lanes lose with it, TopicChunkLose adds that to their dropped counts,
-- TopicChunkDelete deletes it; TopicGenerationForget removes the
-- generation once it is empty.

-- name: TopicDropNext
-- ?1 first ID, ?2 end ID of a generation: its first message left, NULL
-- when none is.
SELECT min(id) FROM {schema}topic_messages WHERE id >= ?1 AND id < ?2;

-- name: TopicChunkLost
-- ?1 first ID, ?2 end ID of a chunk of messages about to be deleted: the
-- messages of it that lanes had not passed, in all. Driven by the (topic,
-- lane)s of the chunk and, for each, by the lanes behind its last message
-- there (topic_lanes_position_idx): a chunk costs what it holds, not a
-- probe per lane of every subscription.
WITH r AS MATERIALIZED (
    SELECT topic, lane, max(id) AS last FROM {schema}topic_messages WHERE id >= ?1 AND id < ?2 GROUP BY topic, lane)
SELECT coalesce(sum((SELECT count(*) FROM {schema}topic_messages AS m
    WHERE m.topic = l.topic AND m.lane = l.lane AND m.xid = 0 AND m.id > l.cursor_id AND m.id >= ?1 AND m.id < ?2)), 0)
FROM r JOIN {schema}topic_lanes AS l INDEXED BY {schema}topic_lanes_position_idx
    ON l.topic = r.topic AND l.lane = r.lane AND l.cursor_xid = 0 AND l.cursor_id < r.last;

-- name: TopicChunkLose
-- ?1, ?2 as TopicChunkLost: each lane adds the messages of the chunk it
-- had not passed to dropped.
WITH r AS MATERIALIZED (
    SELECT topic, lane, max(id) AS last FROM {schema}topic_messages WHERE id >= ?1 AND id < ?2 GROUP BY topic, lane)
UPDATE {schema}topic_lanes AS l SET dropped = l.dropped + (
    SELECT count(*) FROM {schema}topic_messages AS m
    WHERE m.topic = l.topic AND m.lane = l.lane AND m.xid = 0 AND m.id > l.cursor_id AND m.id >= ?1 AND m.id < ?2)
FROM r
WHERE l.topic = r.topic AND l.lane = r.lane AND l.cursor_xid = 0 AND l.cursor_id < r.last;

-- name: TopicChunkDelete
-- ?1 first ID, ?2 end ID of a chunk: one range delete on the rowid.
DELETE FROM {schema}topic_messages WHERE id >= ?1 AND id < ?2;

-- name: TopicGenerationForget
DELETE FROM {schema}topic_generations WHERE gen = ?1;

-- A topic past its retention leaves a generation that other topics still
-- hold a chunk per write transaction, one lane at a time along the read
-- index: TopicPurgeNext finds the chunk's last ID in the lane,
-- TopicPurgeLost and TopicPurgeLose count and record what lanes lose,
-- TopicPurgeDelete deletes it, and TopicPurgeLane finds the next lane.

-- name: TopicPurgeNext
-- ?1 topic, ?2 lane, ?3 the ID after which to go on, ?4 end ID of the
-- generation, ?5 limit: the last ID of the lane's next chunk, NULL when
-- the lane holds no more of the generation.
SELECT max(id) FROM (SELECT id FROM {schema}topic_messages
    WHERE topic = ?1 AND lane = ?2 AND xid = 0 AND id > ?3 AND id < ?4 ORDER BY id LIMIT ?5);

-- name: TopicPurgeLost
-- ?1 topic, ?2 lane, ?3 first ID (exclusive), ?4 last ID of a chunk: the
-- messages of it that the lane's subscriptions had not passed, in all.
SELECT coalesce(sum((SELECT count(*) FROM {schema}topic_messages AS m
    WHERE m.topic = l.topic AND m.lane = l.lane AND m.xid = 0 AND m.id > max(l.cursor_id, ?3) AND m.id <= ?4)), 0)
FROM {schema}topic_lanes AS l INDEXED BY {schema}topic_lanes_position_idx
WHERE l.topic = ?1 AND l.lane = ?2 AND l.cursor_xid = 0 AND l.cursor_id < ?4;

-- name: TopicPurgeLose
-- ?1 to ?4 as TopicPurgeLost: each subscription's lane adds them to
-- dropped.
UPDATE {schema}topic_lanes AS l SET dropped = l.dropped + (
    SELECT count(*) FROM {schema}topic_messages AS m
    WHERE m.topic = l.topic AND m.lane = l.lane AND m.xid = 0 AND m.id > max(l.cursor_id, ?3) AND m.id <= ?4)
WHERE l.topic = ?1 AND l.lane = ?2 AND l.cursor_xid = 0 AND l.cursor_id < ?4;

-- name: TopicPurgeDelete
-- ?1 to ?4 as TopicPurgeLost: the chunk, by the read index.
DELETE FROM {schema}topic_messages WHERE topic = ?1 AND lane = ?2 AND xid = 0 AND id > ?3 AND id <= ?4;

-- name: TopicPurgeLane
-- ?1 topic, ?2 lane: the topic's next lane holding a message, NULL after
-- the last.
SELECT min(lane) FROM {schema}topic_messages WHERE topic = ?1 AND lane > ?2;

-- Routing and the worker registry (migration 016; droverdriver/routing.go).
-- See the PostgreSQL driver's statements of the same names.

-- name: WorkerSeen
-- ?1 JSON array of workers ({name, plain, type, labels, queues, owner,
-- source, kinds}: kinds a JSON array, or null for a worker that named
-- none), names distinct, ?2 now. WHERE true lets the parser read ON
-- CONFLICT as the upsert clause after a SELECT.
INSERT INTO {schema}workers AS w (name, plain, type, labels, queues, owner, source, started_at, last_seen, kinds)
SELECT value ->> 'name', value ->> 'plain', value ->> 'type', value ->> 'labels', value ->> 'queues', value ->> 'owner',
    value ->> 'source', ?2, ?2, value ->> 'kinds'
FROM json_each(?1) WHERE true
ON CONFLICT (name) DO UPDATE
SET plain = excluded.plain, type = excluded.type, labels = excluded.labels, kinds = excluded.kinds,
    queues = CASE WHEN w.owner = excluded.owner
        THEN (SELECT json_group_array(q) FROM (SELECT value AS q FROM json_each(w.queues)
                                               UNION SELECT value FROM json_each(excluded.queues) ORDER BY 1))
        ELSE excluded.queues END,
    started_at = CASE WHEN w.owner = excluded.owner THEN w.started_at ELSE excluded.started_at END,
    owner = excluded.owner, source = excluded.source, last_seen = excluded.last_seen;

-- name: WorkerGone
DELETE FROM {schema}workers WHERE name = ?1 AND owner = ?2;

-- name: WorkerList
SELECT name, plain, type, labels, queues, owner, source, started_at, last_seen, kinds FROM {schema}workers ORDER BY name;

-- name: WorkerPrune
DELETE FROM {schema}workers WHERE last_seen < ?1;

-- name: RouteWaiting
-- ?1 the most groups.
SELECT queue, routing, kind, count(*), min(run_at), min(id)
FROM {schema}jobs
WHERE state = 'available' AND route IS NOT NULL
GROUP BY queue, routing, kind
ORDER BY queue, min(id)
LIMIT ?1;

-- name: KindsWaiting
-- The first ?2 plain jobs of queue ?1 that wait, in claim order (the
-- claim index, which the LIMIT stops), grouped by kind: how many, the
-- oldest run_at and the lowest ID.
SELECT kind, count(*), min(run_at), min(id) FROM (
    SELECT kind, run_at, id FROM {schema}jobs
    WHERE state = 'available' AND route IS NULL AND queue = ?1
    ORDER BY priority, run_at, id LIMIT ?2
)
GROUP BY kind
ORDER BY min(id);

-- name: JobRouteAbsentFind
-- ?1 now, ?2 the most jobs: the routed jobs the absent-worker policy
-- applies to now, with their policy. Run first in the write transaction
-- of JobRouteFallback and JobRouteFailMove.
SELECT j.id, j.routing ->> '$.on_absent'
FROM {schema}jobs AS j
WHERE j.state = 'available' AND j.route IS NOT NULL AND json_type(j.routing, '$.names') IS NOT NULL
  AND j.routing ->> '$.on_absent' IN ('fallback', 'fail')
  AND j.run_at <= ?1 - coalesce(j.routing ->> '$.absent_after_ms', 0) * 1000
  AND NOT EXISTS (
      SELECT 1 FROM {schema}workers AS w
      WHERE w.name IN (SELECT value FROM json_each(j.routing, '$.names'))
        AND (w.last_seen > ?1 - coalesce(j.routing ->> '$.absent_after_ms', 0) * 1000
             OR EXISTS (SELECT 1 FROM {schema}jobs AS r
                        WHERE r.state = 'running' AND r.lease_owner = w.owner AND r.lease_expires_at > ?1)))
ORDER BY j.id
LIMIT ?2;

-- name: JobRouteFallback
-- ?1 JSON array of IDs: keyed by their type from now on, their names kept
-- as fell_back_from.
UPDATE {schema}jobs
SET route = 't:' || (routing ->> '$.type'),
    routing = json_set(json_remove(routing, '$.names'), '$.fell_back_from', json(routing -> '$.names'))
WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'available' AND routing ->> '$.type' IS NOT NULL
RETURNING queue;

-- name: JobRouteFailMove
-- ?1 JSON array of IDs, ?2 now, ?3 now as RFC 3339 text for the recorded
-- error. The rows leave the hot table with JobRescueDelete.
INSERT INTO {schema}finished_jobs (id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at,
    run_at, attempted_at, finalized_at, tags, metadata, errors, error_count, args, batch_id, flow, ordering_key, key_limit,
    route, routing)
SELECT id, 'discarded', queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at, attempted_at, ?2,
    tags, metadata,
    CASE WHEN coalesce(json_array_length(errors), 0) < {errors_kept}
        THEN json_insert(coalesce(errors, '[]'), '$[#]', json_object('attempt', attempt, 'at', ?3, 'error', msg))
        ELSE (SELECT json_insert(json_group_array(json(e.value)), '$[#]', json_object('attempt', attempt, 'at', ?3, 'error', msg))
              FROM (SELECT value FROM json_each(errors)
                    WHERE key > json_array_length(errors) - {errors_kept} ORDER BY key) AS e) END,
    error_count + 1, args, batch_id, flow, ordering_key, key_limit, route, routing
FROM (
    SELECT *, 'no worker named ' || (SELECT group_concat(value, ', ') FROM json_each(routing, '$.names'))
        || ' was seen for ' || coalesce(routing ->> '$.absent_after_ms', 0)
        || ' ms: failed by the job''s on_absent policy' AS msg
    FROM {schema}jobs WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'available'
)
WHERE true
RETURNING id, state, flow & 27 /*FlowEnd*/, queue, ordering_key;

-- name: BulkTaskInsert
-- ?1 action, ?2-?4 the filter (queue, kind, state), ?5 IDs selected, ?6
-- status, ?7 now. BulkTaskPrune follows in the same transaction.
INSERT INTO {schema}bulk_tasks (action, queue, kind, state, selected, status, started_at, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7) RETURNING id;

-- name: BulkTaskPrune
-- ?1 the newest task's ID, ?2 how many tasks to keep.
DELETE FROM {schema}bulk_tasks WHERE id <= ?1 - ?2;

-- name: BulkTaskUpdate
UPDATE {schema}bulk_tasks SET status = ?2, matched = ?3, changed = ?4, error = ?5, updated_at = ?6 WHERE id = ?1;

-- name: BulkTaskGet
SELECT id, action, queue, kind, state, selected, status, matched, changed, error, started_at, updated_at
FROM {schema}bulk_tasks WHERE id = ?1;

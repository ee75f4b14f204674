-- Routing and strict order (docs/routing.md, docs/design/routing.md).
--
-- A routed job stores its route key (route: "t:<type>", "n:<name>", "n*"
-- for several names, "*" for labels alone) and its constraints (routing,
-- JSON: type, names, labels, the absent-worker policy). Plain jobs leave
-- both NULL. Finished jobs keep them, so that a retried job returns to the
-- workers it was meant for.
ALTER TABLE {schema}jobs ADD COLUMN route text, ADD COLUMN routing jsonb;
ALTER TABLE {schema}finished_jobs ADD COLUMN route text, ADD COLUMN routing jsonb;

-- The plain claim index holds plain jobs only, and the plain claim says
-- route IS NULL: the same index, the same plan, the same cost as before
-- for queues without routed jobs. Routed jobs wait in an index of their
-- own, keyed by route after the queue, so that a worker's claim reads
-- only the keys it can match: a worker never walks past jobs of another
-- type or aimed at another worker to find its own.
DROP INDEX {schema}jobs_claim_idx;
CREATE INDEX jobs_claim_idx ON {schema}jobs (queue, priority, run_at, id) WHERE state = 'available' AND route IS NULL;
CREATE INDEX jobs_route_idx ON {schema}jobs (queue, route, priority, run_at, id) WHERE state = 'available' AND route IS NOT NULL;

-- Jobs that a limited or strict claim took and that wait again (a retry,
-- a release, a rescue): a strict queue restarts them first, in the order
-- they started. Only such jobs enter it (plain claims clear limited).
CREATE INDEX jobs_returned_idx ON {schema}jobs (queue, attempted_at, id) WHERE state = 'available' AND limited;

-- Strict order (0: off; N: at most N running, started in claim order).
ALTER TABLE {schema}queue_settings ADD COLUMN strict integer NOT NULL DEFAULT 0;

-- The worker registry: one row per worker name, upserted by a Go client's
-- heartbeat and by drover serve on a remote worker's claims (at most once
-- per interval per worker and server). It lists the fleet (drover workers
-- list, the dashboard) and tells which waiting routed jobs no live worker
-- can take. A plain worker said nothing of itself (no type, name or
-- labels): its claims take plain jobs only, so it matches no routed job.
CREATE TABLE {schema}workers (
    name        text        PRIMARY KEY,
    plain       boolean     NOT NULL DEFAULT false,
    type        text        NOT NULL DEFAULT '',
    labels      jsonb       NOT NULL DEFAULT '{}',
    queues      text[]      NOT NULL DEFAULT '{}',
    owner       text        NOT NULL,
    source      text        NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now(),
    last_seen   timestamptz NOT NULL DEFAULT now()
);

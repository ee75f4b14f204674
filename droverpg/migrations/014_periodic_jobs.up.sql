-- Periodic (cron) jobs defined through the API (Client.PeriodicJobs, HTTP
-- /v1/periodic, drover periodic), next to those of Config.PeriodicJobs.
-- One row per name. Stored definitions (source 'api') carry the job they
-- insert at each tick: kind, args and insert options. Go-configured ones
-- (source 'config') are registered here by the leader that runs them, so
-- that every process can list, pause and trigger them; their kind, args
-- and options are those their Construct returned when registered, for
-- display and for a trigger from a process that does not have the entry.
-- A Go entry and a stored definition of the same name: the Go entry wins
-- (the leader's registration overwrites the row). paused is kept across
-- registrations, so a pause outlives deploys. The last tick of every name
-- stays in periodic_ticks (migration 005); the next one is computed from
-- the schedule.
CREATE TABLE {schema}periodic_jobs (
    name         text        PRIMARY KEY,
    schedule     text        NOT NULL,
    kind         text        NOT NULL,
    args         jsonb       NOT NULL DEFAULT '{}',
    queue        text        NOT NULL,
    priority     smallint    NOT NULL DEFAULT 0,
    max_attempts integer     NOT NULL DEFAULT 0,
    tags         text[]      NOT NULL DEFAULT '{}',
    source       text        NOT NULL CHECK (source IN ('api', 'config')),
    paused       boolean     NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

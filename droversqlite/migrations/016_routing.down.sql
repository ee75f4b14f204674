-- Undoes 016_routing. Routed jobs become plain jobs of their queues.
DROP TABLE {schema}workers;
ALTER TABLE {schema}queue_settings DROP COLUMN strict;
DROP INDEX {schema}jobs_returned_idx;
DROP INDEX {schema}jobs_route_idx;
DROP INDEX {schema}jobs_claim_idx;
ALTER TABLE {schema}finished_jobs DROP COLUMN route;
ALTER TABLE {schema}finished_jobs DROP COLUMN routing;
ALTER TABLE {schema}jobs DROP COLUMN route;
ALTER TABLE {schema}jobs DROP COLUMN routing;
CREATE INDEX {schema}jobs_claim_idx ON {schema}jobs (queue, priority, run_at, id) WHERE state = 'available';

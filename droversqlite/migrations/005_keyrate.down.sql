-- Undoes 005_keyrate: drops per-key rate limits and periodic job ticks.
DROP TABLE {schema}periodic_ticks;
DROP TABLE {schema}key_rates;
ALTER TABLE {schema}finished_jobs DROP COLUMN key_limit;
ALTER TABLE {schema}finished_jobs DROP COLUMN ordering_key;

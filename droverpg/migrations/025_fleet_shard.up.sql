-- A database that is one shard of a fleet (droverfleet) records its place
-- in it here: one row, written when the fleet first attaches it, beside
-- the move of its job and batch IDs into the shard's range (shard i's IDs
-- start at i << 48), so that a job's ID names its shard. A fleet opened
-- with its databases in another order, or with another fleet's database,
-- reads a record that does not match and refuses to start. A lone store
-- has no row.
CREATE TABLE {schema}fleet_shard (
    one        boolean PRIMARY KEY DEFAULT true CHECK (one),
    fleet      text    NOT NULL,
    idx        integer NOT NULL CHECK (idx >= 0),
    key_shards integer NOT NULL CHECK (key_shards >= 1),
    draining   boolean NOT NULL DEFAULT false
);

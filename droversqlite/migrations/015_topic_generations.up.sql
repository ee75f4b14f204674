-- Topic retention by generations; see the PostgreSQL migration of the same
-- number. SQLite has no partitions: generation g is the rowid range
-- [g * 2^40, (g + 1) * 2^40) of topic_messages, and it leaves the store by
-- one range delete on the primary key (a b-tree range removal whose pages
-- go to the freelist and are reused; SQLite has no dead tuples to vacuum).
-- One writer at a time: a generation is final as soon as it is sealed.
CREATE TABLE {schema}topic_generations (
    gen        INTEGER PRIMARY KEY,
    created_at INTEGER NOT NULL,
    sealed_at  INTEGER
);
INSERT INTO {schema}topic_generations (gen, created_at)
VALUES (0, CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER));

-- Messages retention removed before a lane's subscription read them.
ALTER TABLE {schema}topic_lanes ADD COLUMN dropped INTEGER NOT NULL DEFAULT 0;

-- SQLite indexes topic_lanes by position here (see its migration of the
-- same number), so that a lease reaches only the lanes behind their
-- topic's head. PostgreSQL needs no index for that: its lease meets the
-- heads with the lanes in a hash join, cheap on a table of one row per
-- lane, and an index on the cursor would turn every ack, which moves the
-- cursor, from a HOT update of the lane's row into a new version of it in
-- every index. The migration keeps both stores at one schema version.
SELECT 1;

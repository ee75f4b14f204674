-- Undoes 007_state_checks, which changed nothing on PostgreSQL.
SELECT 1;

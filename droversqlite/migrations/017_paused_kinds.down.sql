-- Undoes 017_paused_kinds. Paused kinds are lost: their jobs run again.
ALTER TABLE {schema}queue_settings DROP COLUMN paused_kinds;

-- Undoes 001_init: drops Drover's tables and every job in them.
DROP TABLE {schema}leaders;
DROP TABLE {schema}finished_jobs;
DROP TABLE {schema}jobs;

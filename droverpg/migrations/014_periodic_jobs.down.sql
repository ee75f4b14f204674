DROP TABLE {schema}periodic_jobs;

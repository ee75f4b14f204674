DROP TABLE {schema}bulk_tasks;

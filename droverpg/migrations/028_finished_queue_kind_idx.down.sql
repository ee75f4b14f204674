DROP INDEX {schema}finished_jobs_kind_idx;
DROP INDEX {schema}finished_jobs_queue_idx;
CREATE INDEX finished_jobs_search_idx ON {schema}finished_jobs
    USING brin (queue text_bloom_ops, kind text_bloom_ops, id int8_minmax_ops) WITH (autosummarize = on);

-- Undoes 023_stat_history: the charts' stored history is lost.
DROP TABLE {schema}topic_lag_samples;
DROP TABLE {schema}stat_samples;

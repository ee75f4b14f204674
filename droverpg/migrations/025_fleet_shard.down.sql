DROP TABLE {schema}fleet_shard;

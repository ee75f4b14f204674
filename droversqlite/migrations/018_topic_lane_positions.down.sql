DROP INDEX {schema}topic_lanes_position_idx;

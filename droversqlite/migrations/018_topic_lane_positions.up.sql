-- Lanes by position: a lease looks for the free lanes behind the head of
-- their topic's lane, the last message stored in it. With this index that
-- is one range of lanes per (topic, lane), reaching only the lanes behind
-- the head, instead of one probe of topic_messages per lane of every
-- subscription a client serves (4,000 of them for 20 topics of 50
-- subscriptions and 4 lanes), which had been most of a lease's time. An
-- ack moves a lane's cursor and so one entry of this index.
CREATE INDEX {schema}topic_lanes_position_idx ON {schema}topic_lanes (topic, lane, cursor_xid, cursor_id);

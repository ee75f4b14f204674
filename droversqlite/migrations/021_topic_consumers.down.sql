DROP TABLE {schema}topic_receipt_key;
ALTER TABLE {schema}topic_lanes DROP COLUMN waiting_until;
ALTER TABLE {schema}topic_lanes DROP COLUMN waiting_owner;
ALTER TABLE {schema}topic_lanes DROP COLUMN batch_limit;
ALTER TABLE {schema}topic_lanes DROP COLUMN batch_to_id;
ALTER TABLE {schema}topic_lanes DROP COLUMN batch_to_xid;
ALTER TABLE {schema}topic_lanes DROP COLUMN attempt;

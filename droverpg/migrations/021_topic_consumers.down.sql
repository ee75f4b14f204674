DROP TABLE {schema}topic_receipt_key;
ALTER TABLE {schema}topic_lanes DROP COLUMN attempt, DROP COLUMN batch_to_xid, DROP COLUMN batch_to_id, DROP COLUMN batch_limit,
    DROP COLUMN waiting_owner, DROP COLUMN waiting_until;

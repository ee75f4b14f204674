-- Topic consumers (issue 33; docs/design/topics.md, "Consumers").
--
-- attempt counts the deliveries of the lane's next message that no ack has
-- moved past: a lease adds one, an ack that moves the cursor resets it, a
-- release (a consumer handing its batch back) takes its own back, and an
-- expired lease leaves it, so that lease expiries count as attempts.
-- batch_to and batch_limit bound the batch the last lease handed out: the
-- head of the lane when it was leased and the most messages it could
-- take. After an expired lease they are the suspect region that the lane
-- delivers one message at a time until it is past it, so that a message
-- that kills its consumer is isolated and, past the subscription's max
-- attempts, dead.
--
-- waiting_owner is a consumer that found the lane held by another while
-- it had less than its fair share of the subscription, until
-- waiting_until: the next leases of the subscription count it as active,
-- and the lane is not kept past its holder's ack, so that it frees.
-- No index covers these columns, so lane updates stay HOT.
ALTER TABLE {schema}topic_lanes
    ADD COLUMN attempt       integer NOT NULL DEFAULT 0,
    ADD COLUMN batch_to_xid  bigint,
    ADD COLUMN batch_to_id   bigint,
    ADD COLUMN batch_limit   integer NOT NULL DEFAULT 0,
    ADD COLUMN waiting_owner text,
    ADD COLUMN waiting_until timestamptz;

-- The key that authenticates the receipts of remote consumers (an HMAC):
-- one row, made by the first server that needs it, read by every server
-- of the fleet, so that any of them takes any receipt.
CREATE TABLE {schema}topic_receipt_key (
    id         smallint    PRIMARY KEY CHECK (id = 1),
    secret     bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

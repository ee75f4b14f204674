DROP TABLE {schema}topic_lanes;
DROP TABLE {schema}topic_subscriptions;
DROP TABLE {schema}topic_messages;
DROP TABLE {schema}topics;

-- Undoes 020_topic_commit_order: nothing to undo here.
SELECT 1;

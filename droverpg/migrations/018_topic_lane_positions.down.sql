-- Undoes 020_topic_lane_positions: nothing to undo here.
SELECT 1;

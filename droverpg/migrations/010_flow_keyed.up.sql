-- Keyed jobs carry a flow bit of their own, FlowKeyed (16), like unique
-- jobs carry FlowUnique (8): the end of a keyed job frees a place in its
-- key, so the plain finish fence (flow & FlowEnd, now 27) turns it away to
-- the engine's side path, which promotes the next job of the key from the
-- stored ordering_key. A result that does not say the job is keyed (one
-- from a remote worker) then promotes its key too. The keyed and flow
-- inserts set the bit from now on; rows waiting or running now get it here
-- (a lookup in jobs_key_idx, which holds keyed rows only). Finished keyed
-- jobs are left as they are: JobRetry sets the bit on the row it revives.
UPDATE {schema}jobs SET flow = flow | 16 WHERE ordering_key IS NOT NULL;

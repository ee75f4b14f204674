-- Keyed jobs carry the flow bit FlowKeyed (16); see the PostgreSQL
-- migration of the same number for the reasons.
UPDATE {schema}jobs SET flow = flow | 16 WHERE ordering_key IS NOT NULL;

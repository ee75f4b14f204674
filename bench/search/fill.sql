-- fill.sql: ten million finished jobs in schema big (drover migrate --schema big first): over ~10 days, kinds and queues skewed, 1% discarded, some tags
INSERT INTO big.finished_jobs (id, state, queue, kind, priority, args, metadata, tags, attempt, max_attempts, errors, timeout_ms, created_at, run_at, attempted_at, finalized_at)
SELECT g,
  CASE WHEN g % 100 = 7 THEN 'discarded' WHEN g % 1000 = 3 THEN 'cancelled' ELSE 'completed' END,
  (ARRAY['default','email','reports','images','billing'])[1 + (g % 5)],
  (ARRAY['email.send','report.build','image.resize','invoice.charge','webhook.deliver','user.sync','cache.warm'])[1 + (g*7 % 7 + g % 3) % 7],
  0,
  jsonb_build_object('user_id', g % 50000, 'to', 'user' || (g % 50000) || '@example.com', 'n', g),
  CASE WHEN g % 50 = 0 THEN jsonb_build_object('tenant', 't' || (g % 17)) ELSE '{}'::jsonb END,
  CASE WHEN g % 10 = 0 THEN ARRAY['vip'] WHEN g % 33 = 0 THEN ARRAY['beta','eu'] ELSE '{}'::text[] END,
  1, 25, NULL, 0,
  timestamptz '2026-01-01' + g * interval '86 ms',
  timestamptz '2026-01-01' + g * interval '86 ms',
  timestamptz '2026-01-01' + g * interval '86 ms' + interval '20 ms',
  timestamptz '2026-01-01' + g * interval '86 ms' + interval '40 ms'
FROM generate_series(1, 10000000) g;
ANALYZE big.finished_jobs;

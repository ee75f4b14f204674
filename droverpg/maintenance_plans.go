package droverpg

import (
	"context"
	"fmt"
	"time"

	"github.com/droverhq/drover/internal/stmtplan"
)

// ExplainMaintenance runs every statement of the leader's maintenance
// passes once with p, under EXPLAIN (ANALYZE, FORMAT JSON), each in a
// transaction of its own that is rolled back, so that what the statements
// would change (rescued jobs, pruned rows, forgotten workers) stays as it
// was. Each runs as its pass sends it: after NoJIT where the pass sends
// that first. The bench calls it after a sweep, on the hot table as the
// sweep left it, to show which statement's cost grows with what the table
// holds: the estimate from a grown table's pages buys a JIT compile or a
// walk of the wrong index on every pass (TestJobRouteAbsentPlan).
func (e *executor) ExplainMaintenance(ctx context.Context, p stmtplan.MaintenanceParams) ([]stmtplan.MaintenancePlan, error) {
	pp, prunes := pruneArgs(p.Prune)
	gen := int64(0)
	if gens, err := e.TopicGenerations(ctx); err == nil && len(gens) > 0 {
		gen = gens[0].Gen // the oldest: the one retention looks at first
	}
	type planned struct {
		pass  string
		b     bound
		noJIT bool
	}
	todo := []planned{
		{"rescue", jobRescue.bind(rescueParams{Now: p.Prune.Now, Limit: p.Prune.Limit}), false},
		{"promotion sweep", keyBlocked.bind(p.Prune.Limit), false},
		{"promotion sweep", keyRateIdle.bind(p.Prune.Limit), false},
		{"absent-worker pass", jobRouteAbsent.bind(routeAbsentParams{Now: p.Prune.Now, Limit: p.Prune.Limit}), true},
		{"absent-worker pass", workerPrune.bind(p.WorkerForgetBefore), false},
		{"topic retention", topicGenerations.bind(struct{}{}), false},
		{"topic retention", topicGenerationTopics.bind(genRange(gen)), false},
		{"topic retention", topicGenerationLock.bind(genRange(gen)), false},
	}
	if prunes {
		todo = append(todo, planned{"pruning", jobPrune.bind(pp), false})
	}
	out := make([]stmtplan.MaintenancePlan, 0, len(todo))
	for _, t := range todo {
		mp, err := e.explainRolledBack(ctx, t.b, t.noJIT)
		if err != nil {
			return out, fmt.Errorf("explain %s (%s): %w", t.b.Name, t.pass, err)
		}
		mp.Pass = t.pass
		out = append(out, mp)
	}
	return out, nil
}

var _ stmtplan.Explainer = (*executor)(nil)

// explainRolledBack runs b under EXPLAIN ANALYZE in a transaction that it
// rolls back, after NoJIT when jitOff is set.
func (e *executor) explainRolledBack(ctx context.Context, b bound, jitOff bool) (stmtplan.MaintenancePlan, error) {
	mp := stmtplan.MaintenancePlan{Statement: b.Name}
	args := b.Args
	if len(args) > 0 && args[0] == any(replan) {
		args = args[1:]
	}
	tx, err := e.db.Begin(ctx)
	if err != nil {
		return mp, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if jitOff {
		if _, err := tx.Exec(ctx, e.q[noJIT.name]); err != nil {
			return mp, err
		}
	}
	start := time.Now()
	if err := tx.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+e.q[b.Name], args...).Scan(&mp.Explain); err != nil {
		return mp, err
	}
	mp.Wall = time.Since(start)
	return mp, nil
}

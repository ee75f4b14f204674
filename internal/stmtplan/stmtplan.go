// Package stmtplan is how the bench asks a store to plan the statements of
// the leader's maintenance passes (drover bench sweep). A store that can
// implements Explainer on its executor, found by a type assertion on
// droverdriver.Driver.Executor; droverpg's does. The question lives in an
// internal package so that it stays off the drivers' public types: only
// this module's bench can name it.
package stmtplan

import (
	"context"
	"encoding/json"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// MaintenanceParams are the arguments the leader's passes would give their
// statements at one moment: Prune's Now and Limit serve every pass.
type MaintenanceParams struct {
	Prune droverdriver.PruneParams
	// WorkerForgetBefore is the absent-worker pass's cut for forgetting
	// workers (WorkerPrune).
	WorkerForgetBefore time.Time
}

// MaintenancePlan is one maintenance statement run under EXPLAIN (ANALYZE,
// FORMAT JSON): Explain is the store's output as it came, Wall the time
// the round trip took.
type MaintenancePlan struct {
	// Pass is the leader's loop the statement belongs to (rescue,
	// promotion sweep, absent-worker pass, pruning, topic retention).
	Pass      string
	Statement string
	Explain   json.RawMessage
	Wall      time.Duration
}

// Explainer is implemented by the executor of a store that can run every
// statement of the leader's maintenance passes once under EXPLAIN ANALYZE,
// each in a transaction of its own that is rolled back, so that what the
// statements would change stays as it was.
type Explainer interface {
	ExplainMaintenance(ctx context.Context, p MaintenanceParams) ([]MaintenancePlan, error)
}

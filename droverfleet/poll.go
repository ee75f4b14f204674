package droverfleet

import (
	"context"
	"slices"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

var _ droverdriver.QueuesDueExecutor = outer{}

// QueuesDue implements droverdriver.QueuesDueExecutor: the queues with jobs
// due on any shard, each named once, from one statement per shard. A
// shard's driver without the read counts every queue as due there, so
// that their producers claim as their own polls would.
func (e *exec) QueuesDue(ctx context.Context, queues []string, now time.Time) ([]string, error) {
	due, err := everywhere(ctx, e, true, func(ctx context.Context, ex droverdriver.Executor, _ int) ([]string, error) {
		if d, ok := ex.(droverdriver.QueuesDueExecutor); ok {
			return d.QueuesDue(ctx, queues, now)
		}
		return queues, nil
	})
	slices.Sort(due)
	return slices.Compact(due), err
}

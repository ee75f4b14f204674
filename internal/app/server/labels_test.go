package server_test

import (
	"fmt"
	"testing"

	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestMetricsLabelsAreBounded: enqueueing jobs of many kinds makes no more
// series than the label limit allows; the kinds past it are counted, as
// "other", so that no job goes uncounted.
func TestMetricsLabelsAreBounded(t *testing.T) {
	const limit, kinds = 3, 12
	forEachStore(t, func(t *testing.T, b *bundle) {
		for i := range kinds {
			b.enqueue(t, map[string]any{"kind": fmt.Sprintf("kind-%d", i), "args": map[string]any{"n": 1}, "queue": fmt.Sprintf("q%d", i)})
		}
		fams := b.scrape(t)
		f := fams["drover_jobs_inserted_total"]
		if f == nil {
			t.Fatal("no drover_jobs_inserted_total")
		}
		total, queues, kindsSeen := 0.0, map[string]bool{}, map[string]bool{}
		for _, m := range f.Metric {
			total += m.Counter.GetValue()
			for _, l := range m.Label {
				switch l.GetName() {
				case "queue":
					queues[l.GetValue()] = true
				case "kind":
					kindsSeen[l.GetValue()] = true
				}
			}
		}
		if len(f.Metric) > limit+1 || len(queues) > limit+1 || len(kindsSeen) > limit+1 {
			t.Fatalf("%d series, %d queues, %d kinds for %d kinds under a limit of %d", len(f.Metric), len(queues), len(kindsSeen), kinds, limit)
		}
		if total != kinds {
			t.Fatalf("the series count %v jobs, want %d", total, kinds)
		}
		if v := value(fams, "drover_jobs_inserted_total", map[string]string{"queue": "other", "kind": "other"}); v != kinds-limit {
			t.Fatalf("other counts %v, want %d", v, kinds-limit)
		}
		// The sampled queue gauges fold the smaller queues likewise.
		waitfor.Cond(t, "the queue gauges", func() bool {
			fams = b.scrape(t)
			return value(fams, "drover_queue_jobs", map[string]string{"queue": "other", "state": "available"}) == kinds-limit
		})
		if n := len(fams["drover_queue_oldest_available_age_seconds"].GetMetric()); n != limit+1 {
			t.Fatalf("%d oldest-age series, want %d", n, limit+1)
		}
	}, func(cfg *server.Config) { cfg.MaxLabelValues = limit })
}

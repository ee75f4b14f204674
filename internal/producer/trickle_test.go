package producer

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/lease"
)

// trickleStore is a store of single-job inserts for BenchmarkTrickle: a
// claim looks at what was inserted before it began, takes claimTime (a
// statement's round trip), and returns those jobs.
type trickleStore struct {
	droverdriver.Executor
	claimTime time.Duration

	mu       sync.Mutex
	inserted []time.Time // by job ID - 1
	next     int         // the first job not claimed
	claims   int
	empty    int
}

func (s *trickleStore) insert() {
	s.mu.Lock()
	s.inserted = append(s.inserted, time.Now())
	s.mu.Unlock()
}

func (s *trickleStore) JobClaim(_ context.Context, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	s.mu.Lock()
	end := min(len(s.inserted), s.next+p.Max)
	start := s.next
	s.next = end
	s.claims++
	if end == start {
		s.empty++
	}

	s.mu.Unlock()
	time.Sleep(s.claimTime)
	rows := make([]*drovertype.JobRow, 0, end-start)
	for id := start; id < end; id++ {
		rows = append(rows, &drovertype.JobRow{ID: int64(id + 1), Attempt: 1})
	}
	return rows, nil
}

// BenchmarkTrickle inserts single jobs at 1,000 a second, waking the
// producer after each as a notification would, and reports the start
// latency of the jobs (insert to handler start) that the producer's
// cooldowns and claim rhythm add, apart from any real store: p50 and p99
// in µs, and the share of claims that found nothing.
//
//	go test -run '^$' -bench Trickle -benchtime 3000x ./internal/producer
func BenchmarkTrickle(b *testing.B) {
	store := &trickleStore{claimTime: 300 * time.Microsecond}
	var mu sync.Mutex
	var lat []time.Duration
	done := make(chan struct{})
	run := func(_ context.Context, row *drovertype.JobRow) droverdriver.Result {
		store.mu.Lock()
		at := store.inserted[row.ID-1]
		store.mu.Unlock()
		mu.Lock()
		lat = append(lat, time.Since(at))
		if len(lat) == b.N {
			close(done)
		}
		mu.Unlock()
		return droverdriver.Result{ID: row.ID, Attempt: row.Attempt, Outcome: droverdriver.OutcomeCompleted}
	}
	p := New(store, lease.NewTracker(), func(droverdriver.Result) {}, run, Config{Queue: "q", MaxWorkers: 50,
		Owner: "o", Lease: time.Minute, PollInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { p.Run(ctx); close(stopped) }()
	b.ResetTimer()
	tick := time.NewTicker(time.Millisecond)
	for range b.N {
		<-tick.C
		store.insert()
		p.Wake() // the insert's notification

	}
	tick.Stop()
	<-done
	b.StopTimer()
	cancel()
	<-stopped
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(store.empty)/float64(store.claims), "empty/claim")

}
